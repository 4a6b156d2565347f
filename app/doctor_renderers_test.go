package app

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture"
)

// doctorRendererLines runs `gatehouse doctor --json` and returns its
// renderer helper lines that name this test process as their owner, and
// all of them.
func doctorRendererLines(t *testing.T) (mine, all []DoctorCheck) {
	t.Helper()
	r := cli(t, dataEnv(t), "doctor", "--json")
	if r.status != 0 {
		t.Fatal(r.stderr)
	}
	for _, c := range decode[struct{ Checks []DoctorCheck }](t, r.stdout).Checks {
		if c.Name == "renderer helper" {
			all = append(all, c)
			if strings.Contains(c.Detail, fmt.Sprintf("started by Gatehouse pid %d:", os.Getpid())) {
				mine = append(mine, c)
			}
		}
	}
	return mine, all
}

// TestDoctorShowsTheRendererHelperStartedAhead: while a server with
// process capture on keeps its idle renderer helper started ahead, a
// person running `gatehouse doctor` sees that helper (its pid, that it is
// the pinned Node running the terminal renderer, why it is there, and
// whose it is); once the server closed, doctor says none is running.
func TestDoctorShowsTheRendererHelperStartedAhead(t *testing.T) {
	// A helper of an earlier test's server may still be ending.
	for deadline := time.Now().Add(10 * time.Second); len(ownRenderers()) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if mine, _ := doctorRendererLines(t); len(mine) != 0 {
		t.Skipf("renderer helpers of this process are alive: %+v", mine)
	}
	setCaptureEnv(t, t.TempDir())
	ts := startServer(t)
	// The server's helper is the one still alive once the renderer's
	// startup snapshot is made: making it starts one helper from the new
	// snapshot and ends it after its hello (capture's tryBlob), so the
	// same single helper must be seen for a while.
	var live []capture.RendererProcess
	var since time.Time
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		now := ownRenderers()
		if len(now) != 1 || len(live) != 1 || now[0].PID != live[0].PID {
			live, since = now, time.Now()
		} else if time.Since(since) > 500*time.Millisecond {
			break
		}
	}
	if len(live) != 1 || live[0].OwnerPID != os.Getpid() {
		t.Fatalf("renderer helpers %+v, want the server's one started ahead", live)
	}
	mine, _ := doctorRendererLines(t)
	if len(mine) != 1 || mine[0].Status != "ok" || !strings.HasPrefix(mine[0].Detail, fmt.Sprintf("pid %d, ", live[0].PID)) ||
		!strings.Contains(mine[0].Detail, "pinned Node running Gatehouse's embedded xterm.js terminal renderer") ||
		!strings.Contains(mine[0].Detail, "started ahead of the next capture") {
		t.Fatalf("doctor: %+v, want the helper %d", mine, live[0].PID)
	}

	ts.cancel()
	<-ts.done
	ts.facade.close() // what the server's shutdown does; ends the helper
	for deadline := time.Now().Add(30 * time.Second); len(ownRenderers()) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	mine, all := doctorRendererLines(t)
	if len(mine) != 0 {
		t.Errorf("after close: %+v", mine)
	}
	// Other processes' helpers may be alive on a shared machine; with
	// none, doctor says what a helper is and when one runs.
	if len(all) == 0 || len(capture.LiveRenderers()) == 0 && (len(all) != 1 || !strings.Contains(all[0].Detail, "none running (a renderer helper is the pinned Node")) {
		t.Errorf("doctor with no helper of this process: %+v", all)
	}
}

// ownRenderers are the live renderer helpers this process started.
func ownRenderers() []capture.RendererProcess {
	var out []capture.RendererProcess
	for _, p := range capture.LiveRenderers() {
		if p.OwnerPID == os.Getpid() {
			out = append(out, p)
		}
	}
	return out
}

// TestDoctorWarnsOfAnOrphanedRendererHelper: a process marked as a
// renderer helper whose Gatehouse process is gone is a warning that says
// nothing will end it and how to.
func TestDoctorWarnsOfAnOrphanedRendererHelper(t *testing.T) {
	gone := exec.Command("/bin/true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead := gone.Process.Pid
	orphan := exec.Command("/bin/sleep", "30")
	orphan.Env = []string{capture.RendererMarkerVariable + "=" + strconv.Itoa(dead) + ".x"}
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { orphan.Process.Kill(); orphan.Wait() }()
	want := fmt.Sprintf("pid %d, ", orphan.Process.Pid)
	var got []DoctorCheck
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, all := doctorRendererLines(t)
		got = nil
		for _, c := range all {
			if strings.HasPrefix(c.Detail, want) {
				got = append(got, c)
			}
		}
		if len(got) > 0 {
			break
		}
	}
	if len(got) != 1 || got[0].Status != "warning" || !strings.Contains(got[0].Detail, fmt.Sprintf("its Gatehouse process (pid %d) is gone", dead)) ||
		!strings.Contains(got[0].Detail, fmt.Sprintf("`kill %d`", orphan.Process.Pid)) {
		t.Fatalf("doctor: %+v", got)
	}
}

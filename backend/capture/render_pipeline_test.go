package capture

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// rendererPids are the live renderer helpers this process started
// (their environment holds GATEHOUSE_RENDERER=<our pid>.…).
func rendererPids() []int {
	want := []byte("GATEHOUSE_RENDERER=" + strconv.Itoa(os.Getpid()) + ".")
	var out []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err == nil && bytes.Contains(env, want) {
			out = append(out, pid)
		}
	}
	return out
}

// TestCaptureReadsWhileTheRendererIsStopped: with the renderer helper
// stopped (SIGSTOP) after its start, the target still writes 6 MB to its
// terminal and exits, since the capture keeps reading the PTY while a
// rendered frame is owed (the output pending joins one chunk); once the
// helper runs again, the record holds every byte and its screens are
// xterm.js's for those bytes. Before the pipelining, the loop waited on
// the helper's frame, the PTY filled and the target could not finish.
func TestCaptureReadsWhileTheRendererIsStopped(t *testing.T) {
	work := t.TempDir()
	done := filepath.Join(work, "finished")
	script := `stty -onlcr; sleep 0.3; head -c 6000000 /dev/zero | tr '\0' 'x'; printf '\r\nend\r\n'; : > ` + done
	sc, opts := shScenario(t, script, func(m obj) {
		m["working_directory"] = work
		m["limits"] = obj{"output_bytes": 10_000_000}
	})
	type result struct {
		rec *Record
		err error
	}
	res := make(chan result, 1)
	go func() {
		rec, err := Capture(context.Background(), newSupervisor(t), sc, opts)
		res <- result{rec, err}
	}()
	var helper int
	for deadline := time.Now().Add(30 * time.Second); helper == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if pids := rendererPids(); len(pids) == 1 {
			helper = pids[0]
		}
	}
	if helper == 0 {
		t.Fatal("no renderer helper appeared")
	}
	// once the target runs (the helper has said hello by then), stop the
	// helper for as long as the target writes
	for deadline := time.Now().Add(30 * time.Second); len(proctree.ScanMarked(MarkerVariable+"="+opts.RunID)) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
	}
	if err := syscall.Kill(helper, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	finished := false
	for deadline := time.Now().Add(20 * time.Second); !finished && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		_, err := os.Stat(done)
		finished = err == nil
	}
	syscall.Kill(helper, syscall.SIGCONT) //nolint:errcheck // the capture ends it either way
	r := <-res
	if !finished {
		t.Fatal("the target could not finish writing while the renderer was stopped: the capture stopped reading its terminal")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	checkRecord(t, r.rec, opts)
	out := output(r.rec)
	if len(out) != 6_000_000+len("\r\nend\r\n") || strings.Count(out, "x") != 6_000_000 || r.rec.Truncated {
		t.Fatalf("recorded %d bytes, truncated %v: %v", len(out), r.rec.Truncated, r.rec.Limitations)
	}
	last := r.rec.RenderedFrames[len(r.rec.RenderedFrames)-1]
	if got := strings.TrimRight(last.Lines[last.CursorY-1], " "); got != "end" {
		t.Errorf("last screen's line above the cursor %q, want end", got)
	}
	t.Logf("%d raw frames, %d of them long enough for the fast-forward", len(r.rec.Frames), checkFramesMatchXterm(t, requireNode(t), sc, r.rec))
}

// TestCaptureKeepsOutputInOrderAroundCheckpoints: time checkpoints taken
// while output is pending (a checkpoint first records the screens owed)
// never let later output be recorded before the output pending: the raw
// frames join into exactly what the target wrote.
func TestCaptureKeepsOutputInOrderAroundCheckpoints(t *testing.T) {
	var cps []any
	for i := 0; i < 60; i++ {
		cps = append(cps, obj{"name": "t" + strconv.Itoa(i), "trigger": obj{"type": "time", "at_ms": 5 + 5*i}})
	}
	sc, opts := shScenario(t, `stty -onlcr; seq -f 'x%gx' 1 700000`, func(m obj) {
		m["limits"] = obj{"output_bytes": 10_000_000}
		m["checkpoints"] = cps
	})
	rec := capture(t, sc, opts)
	var want strings.Builder
	for i := 1; i <= 700000; i++ {
		want.WriteString("x" + strconv.Itoa(i) + "x\n") // letters around the numbers: no pid normalization
	}
	if out := output(rec); out != want.String() {
		i := 0
		for i < len(out) && i < want.Len() && out[i] == want.String()[i] {
			i++
		}
		t.Fatalf("the raw frames differ from the output at byte %d of %d (%d frames): %q", i, want.Len(), len(rec.Frames), out[i:min(len(out), i+40)])
	}
	t.Logf("%d raw frames, %d checkpoints", len(rec.Frames), len(rec.FilesystemCheckpoints))
}

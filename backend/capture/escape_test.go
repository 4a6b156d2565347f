package capture

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// The hostile escapes of docs/process-ownership.md as capture targets (the same page:
// "a descendant that moved itself out of the capture's cgroup is still
// owned"): the escapee double-forks, starts a new session, clears its
// environment (so no marker), and moves itself out of the capture's
// cgroup. Under each mechanism capture can have, settlement must never be
// quiesced while it lives, the cleanup must end it, and /proc (read by
// the test, by the escapee's pid file) must show it gone.
func TestCaptureEscapesAreOwned(t *testing.T) {
	mount := cgroupMount(t)
	escapes := map[string]string{
		"empty environment":    `(setsid env -i /bin/sh -c 'echo $$ >> "$0"; while :; do /bin/sleep 1; done' PIDS &) ; exit 0`,
		"into the root cgroup": `(setsid env -i /bin/sh -c 'echo $$ > "$1/cgroup.procs" || exit 9; echo $$ >> "$0"; while :; do /bin/sleep 1; done' PIDS MOUNT &) ; exit 0`,
		"child subreaper": `(setsid env -i python3 -c 'import ctypes,os,sys,time
ctypes.CDLL(None).prctl(36,1,0,0,0)
if os.fork()==0:
  if os.fork()==0:
    open(sys.argv[1],"a").write(str(os.getpid())+"\n")
    os.execv("/bin/sh",["sh","-c","while :; do sleep 1; done"])
  os._exit(0)
while True: time.sleep(1)' PIDS &) ; exit 0`,
	}
	for _, mode := range []struct {
		name string
		opts proctree.Options
	}{{proctree.MechanismCgroup, proctree.Options{}}, {proctree.MechanismSubreaper, proctree.Options{NoCgroup: true}}} {
		t.Run(mode.name, func(t *testing.T) {
			sup, err := proctree.NewSupervisor(mode.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer sup.Close()
			if sup.Mechanism() != mode.name {
				t.Skip("mechanism unavailable here:", sup.CgroupUnavailable())
			}
			for name, spawn := range escapes {
				t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
					if strings.Contains(spawn, "MOUNT") && mount == "" {
						t.Skip("no cgroup v2")
					}
					pidFile := filepath.Join(t.TempDir(), "pids")
					script := strings.NewReplacer("PIDS", pidFile, "MOUNT", mount).Replace(spawn)
					script = "(" + script + ")\n" + `while [ ! -s ` + pidFile + ` ]; do sleep 0.02; done; sleep 0.1; echo spawned`
					sc, opts := shScenario(t, script, func(m obj) { m["settle_ms"] = 300 })
					rec, err := Capture(context.Background(), sup, sc, opts)
					if err != nil {
						t.Fatal(err)
					}
					pids := readPidFile(t, pidFile)
					if len(pids) != 1 {
						t.Fatalf("pids %v (output %q)", pids, output(rec))
					}
					if _, err := os.Stat(fmt.Sprintf("/proc/%d", pids[0])); err == nil {
						if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pids[0])); !strings.Contains(string(st), ") Z") {
							t.Fatalf("the escapee %d survived the capture: %s", pids[0], st)
						}
					}
					if s := rec.Settlement; s.State == SettlementQuiesced || s.CleanupOutcome != CleanupCleaned {
						t.Fatalf("settlement %+v while an owned descendant lived", s)
					}
				})
			}
		})
	}
}

func cgroupMount(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if f := strings.Fields(pre); ok && strings.HasPrefix(post, "cgroup2 ") && len(f) >= 5 {
			return f[4]
		}
	}
	return ""
}

package proctree

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// withSupervisor runs fn once per available mechanism: with per-tree
// cgroups (when this machine has a writable cgroup v2) and without.
func withSupervisor(t *testing.T, fn func(t *testing.T, s *Supervisor)) {
	for _, mode := range []Options{{}, {NoCgroup: true}} {
		name := "cgroup"
		if mode.NoCgroup {
			name = "nocgroup"
		}
		t.Run(name, func(t *testing.T) {
			s, err := NewSupervisor(mode)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !mode.NoCgroup && s.Mechanism() != "cgroup" {
				t.Skip("no writable cgroup v2 here:", s.CgroupUnavailable())
			}
			fn(t, s)
		})
	}
}

var counter int
var counterMu sync.Mutex

func marker() string {
	counterMu.Lock()
	defer counterMu.Unlock()
	counter++
	return fmt.Sprintf("GATEHOUSE_RUN_ID=proctree-test-%d-%d", os.Getpid(), counter)
}

// startSh starts /bin/sh -c script with a fresh marker.
func startSh(t *testing.T, s *Supervisor, script string) (*Tree, string) {
	t.Helper()
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	m := marker()
	tr, err := s.Start(Spec{
		Path: "/bin/sh", Args: []string{"sh", "-c", script},
		Env: []string{"PATH=/usr/bin:/bin", m}, Dir: "/", Files: []*os.File{devnull, devnull, devnull}, Marker: m,
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr, m
}

func waitExit(t *testing.T, tr *Tree) {
	t.Helper()
	select {
	case <-tr.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("root did not exit")
	}
}

func TestExitStatusIsDelivered(t *testing.T) {
	withSupervisor(t, func(t *testing.T, s *Supervisor) {
		tr, _ := startSh(t, s, "exit 7")
		waitExit(t, tr)
		if code, sig := tr.ExitStatus(); code != 7 || sig != "" {
			t.Fatalf("exit %d %q", code, sig)
		}
		tr, _ = startSh(t, s, "kill -KILL $$")
		waitExit(t, tr)
		if code, sig := tr.ExitStatus(); code != -1 || sig != "SIGKILL" {
			t.Fatalf("exit %d %q", code, sig)
		}
		if c := tr.Terminate(Grace); !c.Verified || c.Signalled != 0 {
			t.Fatalf("empty tree cleanup %+v", c)
		}
	})
}

// Each escape leaves processes behind after the root exits; Terminate must
// end all of them, as a /proc scan for the marker confirms.
func TestEscapesAreEnded(t *testing.T) {
	escapes := map[string]string{
		"double fork":        "(sleep 300 &) ; exit 0",
		"setsid":             "setsid sleep 300 & exit 0",
		"new process group":  "set -m; sleep 300 & exit 0",
		"ignores SIGTERM":    "(trap '' TERM; while :; do sleep 1; done) & exit 0",
		"holds stdout":       "(exec sleep 300) & exit 0",
		"bounded fork loop":  "i=0; while [ $i -lt 100 ]; do sleep 300 & i=$((i+1)); done; exit 0",
		"root still running": "trap '' TERM; sleep 300 & sleep 300",
	}
	withSupervisor(t, func(t *testing.T, s *Supervisor) {
		for name, script := range escapes {
			t.Run(name, func(t *testing.T) {
				tr, m := startSh(t, s, script)
				if name != "root still running" {
					waitExit(t, tr)
				}
				if len(tr.Members()) == 0 && name != "root still running" {
					// Give the background children a moment to exist.
					for i := 0; i < 200 && len(ScanMarked(m)) == 0; i++ {
						time.Sleep(5 * time.Millisecond)
					}
				}
				c := tr.Terminate(100 * time.Millisecond)
				if !c.Verified || c.Mechanism != s.Mechanism() {
					t.Fatalf("cleanup %+v", c)
				}
				if left := ScanMarked(m); len(left) > 0 {
					t.Fatalf("processes survived: %v", left)
				}
				waitExit(t, tr)
			})
		}
	})
}

func TestConcurrentTrees(t *testing.T) {
	withSupervisor(t, func(t *testing.T, s *Supervisor) {
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				tr, m := startSh(t, s, fmt.Sprintf("sleep 300 & exit %d", i))
				<-tr.Exited()
				if code, _ := tr.ExitStatus(); code != i {
					t.Errorf("tree %d exit %d", i, code)
				}
				if c := tr.Terminate(Grace); !c.Verified || len(ScanMarked(m)) > 0 {
					var why []string
					for _, p := range c.Remaining {
						st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
						cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
						why = append(why, fmt.Sprintf("%s %q", st, cmd))
					}
					t.Errorf("tree %d: %+v %v", i, c, why)
				}
			}(i)
		}
		wg.Wait()
	})
}

func TestOnlyOneSupervisor(t *testing.T) {
	s, err := NewSupervisor(Options{NoCgroup: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSupervisor(Options{}); err != ErrSupervisorActive {
		t.Fatalf("second supervisor: %v", err)
	}
	s.Close()
	s2, err := NewSupervisor(Options{NoCgroup: true})
	if err != nil {
		t.Fatal(err)
	}
	s2.Close()
}

func TestStartRefusesBadSpecs(t *testing.T) {
	s, err := NewSupervisor(Options{NoCgroup: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Start(Spec{Path: "sh", Args: []string{"sh"}, Marker: "A=1", Env: []string{"A=1"}}); err == nil {
		t.Error("relative path accepted")
	}
	if _, err := s.Start(Spec{Path: "/bin/sh", Args: []string{"sh"}, Marker: "A=1"}); err == nil {
		t.Error("environment without marker accepted")
	}
	if _, err := s.Start(Spec{Path: "/no/such", Args: []string{"x"}, Marker: "A=1", Env: []string{"A=1"}}); err == nil {
		t.Error("missing program started")
	}
}

func TestInstanceTags(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	in, ok := ParseTag(self.Tag() + ".attempt-1")
	if !ok || in != self || !in.Alive() || Stale(self.Tag()+".x") {
		t.Fatalf("own tag %s: %+v %v", self.Tag(), in, ok)
	}
	for _, name := range []string{"i999999999.1.x", "attempt-x", "i12", "ix.y.z", "i1.2x.z"} {
		if !Stale(name) {
			t.Errorf("%s not stale", name)
		}
	}
	// A live pid with the wrong start time is another process: stale.
	if !Stale(fmt.Sprintf("i%d.%d.x", self.Pid, self.StartTime+1)) {
		t.Error("recycled pid treated as alive")
	}
}

// A cgroup left by a crashed instance (its tag names a dead process) is
// killed and removed when the next supervisor starts.
func TestStartupSweepsStaleCgroups(t *testing.T) {
	parent, err := findCgroupParent()
	if err != nil {
		t.Skip(err)
	}
	stale := filepath.Join(parent, "i999999999.1.crashed")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Fatal(err)
	}
	m := marker()
	cmd := exec.Command("/bin/sh", "-c", fmt.Sprintf("echo $$ > %s/cgroup.procs; exec sleep 300", stale))
	cmd.Env = []string{"PATH=/usr/bin:/bin", m}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 400; i++ {
		if b, _ := os.ReadFile(filepath.Join(stale, "cgroup.procs")); strings.TrimSpace(string(b)) != "" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	s, err := NewSupervisor(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatal("stale cgroup survived the sweep")
	}
	if left := ScanMarked(m); len(left) > 0 {
		t.Fatalf("stale process survived: %v", left)
	}
}

// A process left by a crashed instance (its HOME lies in a folder tagged
// with a dead instance) is killed by SweepStale; a live instance's is not.
func TestSweepStaleProcesses(t *testing.T) {
	runs := t.TempDir()
	self, _ := Self()
	start := func(tag string) (*exec.Cmd, string) {
		m := marker()
		cmd := exec.Command("/bin/sleep", "300")
		cmd.Env = []string{"HOME=" + filepath.Join(runs, tag, "home"), m}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, m
	}
	dead, deadMarker := start("i999999999.1.attempt")
	live, liveMarker := start(self.Tag() + ".attempt")
	defer live.Process.Kill()
	killed := SweepStale("HOME", runs)
	if len(killed) != 1 || killed[0] != dead.Process.Pid {
		t.Fatalf("killed %v, want only %d", killed, dead.Process.Pid)
	}
	dead.Wait()
	if len(ScanMarked(deadMarker)) != 0 {
		t.Fatal("stale process survived")
	}
	if len(ScanMarked(liveMarker)) != 1 {
		t.Fatal("a live instance's process was killed")
	}
	live.Process.Kill()
	live.Wait()
}

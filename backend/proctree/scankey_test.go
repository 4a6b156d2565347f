package proctree

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestScanKey finds a live process by its environment variable's name and
// reports the value; a variable whose name merely starts with the key,
// and a process that has exited, are not listed.
func TestScanKey(t *testing.T) {
	key := fmt.Sprintf("GATEHOUSE_SCANKEY_TEST_%d", os.Getpid())
	start := func(env string) *exec.Cmd {
		t.Helper()
		c := exec.Command("/bin/sleep", "30")
		c.Env = []string{env}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	hit := start(key + "=a.b=c")
	miss := start(key + "X=no")
	var got map[int]string
	for i := 0; i < 200; i++ { // until the exec has replaced the environment
		if got = ScanKey(key); len(got) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 1 || got[hit.Process.Pid] != "a.b=c" {
		t.Fatalf("ScanKey(%s) = %v, want {%d: a.b=c} (not %d)", key, got, hit.Process.Pid, miss.Process.Pid)
	}
	hit.Process.Kill()
	hit.Wait()
	if got := ScanKey(key); len(got) != 0 {
		t.Errorf("after the exit: %v", got)
	}
}

package proctree

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// Removing a cgroup twice closes its descriptor once: the second removal
// must not close whatever file took the descriptor's number meanwhile
// (a double close there once could have closed, say, the confinement
// launcher's descriptor).
func TestCgroupRemoveTwiceClosesOnce(t *testing.T) {
	c, err := newCgroup(t.TempDir(), "tree")
	if err != nil {
		t.Fatal(err)
	}
	n := c.fd
	c.remove()
	other, err := os.Open(filepath.Join("/", "dev", "null"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if int(other.Fd()) != n {
		t.Skipf("the number %d was not reused (got %d)", n, other.Fd())
	}
	c.remove()
	var st unix.Stat_t
	if err := unix.Fstat(n, &st); err != nil {
		t.Fatalf("the second removal closed descriptor %d, another file's: %v", n, err)
	}
}

// Two releases of one tree at once (Terminate may be called more than
// once) take its cgroup once: only one of them removes it and closes its
// descriptor. Run with -race, which sees the two take it otherwise.
func TestConcurrentReleaseTakesCgroupOnce(t *testing.T) {
	for i := 0; i < 20; i++ {
		c, err := newCgroup(t.TempDir(), "tree")
		if err != nil {
			t.Fatal(err)
		}
		s := &Supervisor{}
		tr := &Tree{sup: s, nsFD: -1, cg: c}
		done := make(chan struct{})
		go func() { tr.release(); close(done) }()
		tr.release()
		<-done
		s.background.Wait()
		if tr.cg != nil || c.fd != -1 {
			t.Fatal("the cgroup was not released")
		}
	}
}

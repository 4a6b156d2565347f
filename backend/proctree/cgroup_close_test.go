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

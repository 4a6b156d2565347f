package app

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// The digest a signature is checked against is of a whole regular file:
// a FIFO in place of a saved Evidence file is an error at once (it hung
// the library's listing forever), and a file over the import bound is an
// error, not the digest of its first MaxImportBytes+1 bytes.
func TestFileDigestIsOfAWholeRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	var c fileDigests
	done := make(chan error, 1)
	go func() { _, err := c.of(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a FIFO got a digest")
		}
	case <-time.After(20 * time.Second): // a hang detector, not a speed bound
		t.Fatal("the digest of a FIFO hangs")
	}
	if _, err := c.of(dir); err == nil {
		t.Fatal("a directory got a digest")
	}
	big := filepath.Join(dir, "big.json")
	for _, n := range []int64{MaxImportBytes, MaxImportBytes + 1} {
		if err := os.Truncate(big, 0); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		fh, err := os.Create(big)
		if err != nil {
			t.Fatal(err)
		}
		fh.Truncate(n) // sparse: no disk used
		fh.Close()
		_, err = c.of(big)
		if n == MaxImportBytes && err != nil {
			t.Fatalf("a file at the bound: %v", err)
		}
		if n > MaxImportBytes && err == nil {
			t.Fatalf("a file of %d bytes, one past the bound, got a digest", n)
		}
	}
}

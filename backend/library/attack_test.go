package library

import (
	"bytes"
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// hangLimit is how long an attacker-side test waits before calling an
// operation hung; it bounds a hang, it measures no speed.
const hangLimit = 20 * time.Second

// A FIFO, a device or a directory put in place of a saved file is refused
// as not a saved file (evidence_integrity_mismatch); Open never blocks on
// it, and neither does the background sweep (Wait ends).
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	l, _, _ := newTestLibrary(t)
	ctx := context.Background()
	for _, kind := range []string{"fifo", "device", "directory"} {
		t.Run(kind, func(t *testing.T) {
			e := save(t, l, sealedComparison(t, "special-"+kind))
			path := l.Path(e.EvidenceID)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			var err error
			switch kind {
			case "fifo":
				err = syscall.Mkfifo(path, 0o600)
			case "device":
				err = os.Symlink("/dev/zero", path)
			case "directory":
				err = os.Mkdir(path, 0o700)
			}
			if err != nil {
				t.Fatal(err)
			}
			l.ForgetMark(ctx, e.EvidenceID) // the sweep looks at unmarked files
			done := make(chan error, 1)
			go func() {
				_, err := l.Open(ctx, e.EvidenceID)
				done <- err
			}()
			select {
			case err := <-done:
				if codeOf(err) != "evidence_integrity_mismatch" {
					t.Fatalf("Open of a %s: %v, want evidence_integrity_mismatch", kind, err)
				}
			case <-time.After(hangLimit):
				t.Fatalf("Open of a %s hangs", kind)
			}
			sweep, cancel := context.WithCancel(ctx)
			l.Preverify(sweep, []string{e.EvidenceID})
			cancel()
			waited := make(chan struct{})
			go func() { l.Wait(); close(waited) }()
			select {
			case <-waited:
			case <-time.After(hangLimit):
				t.Fatalf("the background sweep hangs on a %s", kind)
			}
		})
	}
}

// Importing the genuine Evidence while the library's file of the same id
// was changed restores the file: "already present" is said only when the
// library's file is that Evidence, verified.
func TestImportOverAChangedFileRestoresIt(t *testing.T) {
	l, _, _ := newTestLibrary(t)
	ctx := context.Background()
	data := sealedComparison(t, "genuine")
	e := save(t, l, data)
	changed := bytes.Replace(data, []byte("genuine"), []byte("changed"), 1)
	if err := os.WriteFile(l.Path(e.EvidenceID), changed, 0o600); err != nil {
		t.Fatal(err)
	}
	c, issues := Check(data)
	if len(issues) > 0 {
		t.Fatal(issues)
	}
	if _, present, err := l.Import(ctx, c, "genuine.json"); err != nil || present {
		t.Fatalf("import over a changed file: present %v, err %v; want restored", present, err)
	}
	o, err := l.Open(ctx, e.EvidenceID)
	if err != nil || !bytes.Equal(o.Data, data) {
		t.Fatalf("after the import the library's file does not hold the genuine bytes: %v", err)
	}
}

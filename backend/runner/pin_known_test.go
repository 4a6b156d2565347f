package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// knownPin writes an executable file of content and returns its pin (the
// version is not asked: CheckKnown never runs the file).
func knownPin(t *testing.T, content string) Pin {
	t.Helper()
	path := filepath.Join(t.TempDir(), "node")
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	return Pin{Path: path, Version: "v20.0.0", SHA256: hex.EncodeToString(sum[:])}
}

// later is a clock far enough past the file's last write for its
// identity to be kept (the file was written just now).
func later() time.Time { return time.Now().Add(time.Minute) }

func TestCheckKnownRemembersAndTrustsOnlyTheSameFile(t *testing.T) {
	p := knownPin(t, "#!/bin/sh\necho pinned\n")
	known, err := p.checkKnown(nil, later)
	if err != nil || known == nil {
		t.Fatalf("first check: %+v %v", known, err)
	}
	if known.Path != p.Path || known.SHA256 != p.SHA256 || known.Size == 0 || known.CtimeNs == 0 {
		t.Fatalf("identity: %+v", known)
	}
	again, err := p.checkKnown(known, later)
	if err != nil || again != known {
		t.Fatalf("unchanged file: %+v %v", again, err)
	}
	// A kept identity is no proof for another pin of the same file.
	other := p
	other.SHA256 = strings.Repeat("0", 64)
	if _, err := other.checkKnown(known, later); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("another digest trusted the kept identity: %v", err)
	}
}

// The attacker's side: every way of changing the pinned bytes while
// keeping what can be kept of the identity is found by hashing again.
func TestCheckKnownRefusesAChangedRuntime(t *testing.T) {
	const good = "#!/bin/sh\necho pinned\n"
	const evil = "#!/bin/sh\necho hacked\n" // same size
	for name, change := range map[string]func(t *testing.T, path string){
		// Same size, same inode, modification time put back: only the
		// change time moves.
		"rewritten in place, mtime restored": func(t *testing.T, path string) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte(evil), 0); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := os.Chtimes(path, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		},
		// Another file renamed over the path, its times set to the old
		// file's: a new inode.
		"replaced by rename, times copied": func(t *testing.T, path string) {
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			tmp := path + ".new"
			if err := os.WriteFile(tmp, []byte(evil), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(tmp, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := knownPin(t, good)
			known, err := p.checkKnown(nil, later)
			if err != nil || known == nil {
				t.Fatalf("first check: %+v %v", known, err)
			}
			// Whatever the kernel's timestamp granularity, the change
			// happens in a later tick than the pin's write.
			time.Sleep(20 * time.Millisecond)
			change(t, p.Path)
			if got, err := p.checkKnown(known, later); err == nil || !strings.Contains(err.Error(), "changed") {
				t.Fatalf("a changed runtime passed with the kept identity: %+v %v", got, err)
			}
		})
	}
}

// An identity taken less than racyMargin after the file's last write is
// not kept: a write in the same timestamp tick would not have moved it.
func TestCheckKnownKeepsNoRacyIdentity(t *testing.T) {
	p := knownPin(t, "#!/bin/sh\necho pinned\n")
	known, err := p.CheckKnown(nil) // written just now
	if err != nil {
		t.Fatal(err)
	}
	if known != nil {
		t.Fatalf("a file written just now was remembered: %+v", known)
	}
}

func TestCheckKnownRefusesWhatCheckRefuses(t *testing.T) {
	p := knownPin(t, "#!/bin/sh\n")
	known, err := p.checkKnown(nil, later)
	if err != nil || known == nil {
		t.Fatal(known, err)
	}
	if err := os.Chmod(p.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := p.checkKnown(known, later); err == nil || !strings.Contains(err.Error(), "not an executable regular file") {
		t.Fatalf("a file no longer executable: %v", err)
	}
	if err := os.Remove(p.Path); err != nil {
		t.Fatal(err)
	}
	if _, err := p.checkKnown(known, later); err == nil {
		t.Fatal("a removed runtime passed")
	}
	if _, err := (Pin{}).CheckKnown(nil); err == nil {
		t.Fatal("no pin passed")
	}
}

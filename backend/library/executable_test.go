package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// memIdentities is an IdentityStore in memory, counting writes.
type memIdentities struct {
	kept json.RawMessage
	puts int
}

func (m *memIdentities) Get(_ context.Context, ns, key string) (json.RawMessage, error) {
	if ns != ExecutableNamespace || key != ExecutableKey || m.kept == nil {
		return nil, errors.New("not found")
	}
	return m.kept, nil
}

func (m *memIdentities) Put(_ context.Context, ns, key string, v json.RawMessage) error {
	if ns != ExecutableNamespace || key != ExecutableKey {
		return errors.New("wrong key")
	}
	m.kept, m.puts = append(json.RawMessage(nil), v...), m.puts+1
	return nil
}

func sumHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// later is a clock 10 s ahead, so a file written just now is not racy.
func later() time.Time { return time.Now().Add(10 * time.Second) }

func writeExe(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "gatehouse")
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// A kept identity is used instead of hashing: the digest it names is
// returned (here a marker no file hashes to, so a hash would show).
func TestExecutableDigestUsesTheKeptIdentity(t *testing.T) {
	p := writeExe(t, "build one")
	s := &memIdentities{}
	if got := executableDigest(p, s, later); got != sumHex([]byte("build one")) || s.puts != 1 {
		t.Fatalf("first digest %q, %d identities kept", got, s.puts)
	}
	var k ExecutableIdentity
	if err := json.Unmarshal(s.kept, &k); err != nil {
		t.Fatal(err)
	}
	k.SHA256 = "marker"
	s.kept, _ = json.Marshal(k)
	if got := executableDigest(p, s, later); got != "marker" {
		t.Fatalf("the kept identity was not used: %q", got)
	}
}

// An attacker who changes the executable's bytes cannot keep its old
// digest: a same-size rewrite with the modification time put back, and
// a rename of another file over the path, are both hashed again.
func TestExecutableDigestRehashesAChangedFile(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, p string){
		"same-size rewrite, mtime restored": func(t *testing.T, p string) {
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("build TWO"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
		},
		"rename over the path": func(t *testing.T, p string) {
			if err := os.WriteFile(p+".new", []byte("build TWO"), 0o755); err != nil {
				t.Fatal(err)
			}
			st, _ := os.Stat(p)
			if err := os.Chtimes(p+".new", st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := writeExe(t, "build one")
			s := &memIdentities{}
			if got := executableDigest(p, s, later); got != sumHex([]byte("build one")) || s.puts != 1 {
				t.Fatalf("first digest %q, %d identities kept", got, s.puts)
			}
			time.Sleep(20 * time.Millisecond) // past the file times' tick
			change(t, p)
			if got := executableDigest(p, s, later); got != sumHex([]byte("build TWO")) {
				t.Fatalf("the changed file kept its old digest: %q", got)
			}
		})
	}
}

// No identity is kept for a file written less than 2 s before the hash
// (a later write in the same tick would not change it), nor without a
// store; the digest is still returned.
func TestExecutableDigestKeepsNoRacyIdentity(t *testing.T) {
	p := writeExe(t, "build one")
	s := &memIdentities{}
	if got := executableDigest(p, s, time.Now); got != sumHex([]byte("build one")) || s.puts != 0 {
		t.Fatalf("digest %q, %d identities kept for a file written just now", got, s.puts)
	}
	if got := executableDigest(p, nil, later); got != sumHex([]byte("build one")) {
		t.Fatalf("digest without a store %q", got)
	}
	if got := executableDigest(filepath.Join(t.TempDir(), "absent"), s, later); got != "" || s.puts != 0 {
		t.Fatalf("an unreadable executable has digest %q", got)
	}
	// A kept identity that does not parse is not trusted.
	s.kept = json.RawMessage(`{"sha256":`)
	if got := executableDigest(p, s, later); got != sumHex([]byte("build one")) {
		t.Fatalf("digest through an unreadable kept identity %q", got)
	}
}

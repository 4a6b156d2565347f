package contentcache

import (
	"crypto/sha256"
	"testing"
)

// Key is the digest of context, NUL, content: moving a byte across the
// boundary changes it, and the same pair always gives the same key.
func TestKey(t *testing.T) {
	if got, want := Key("rev", []byte("{}")), sha256.Sum256([]byte("rev\x00{}")); got != want {
		t.Fatalf("Key = %x, want %x", got, want)
	}
	if Key("ab", []byte("c")) == Key("a", []byte("bc")) {
		t.Fatal("the boundary between context and content is lost")
	}
	if Key("a", []byte("b")) != Key("a", []byte("b")) {
		t.Fatal("the same pair gave two keys")
	}
}

package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/store"
)

// RuntimeCheck keeps the identity the pinned runtime had when it hashed to
// its pin and, in the next process, trusts it instead of hashing the file
// again; a changed file or another pin is hashed and refused.
func TestRuntimeCheckKeepsTheRuntimeIdentity(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	ctx := context.Background()
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pin, err := runner.PinNode(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	env := func(p runner.Pin) *Env { return &Env{IO: IO{Stderr: os.Stderr}, DB: db, Pin: &p} }
	if err := env(pin).RuntimeCheck()(); err != nil {
		t.Fatal(err)
	}
	raw, err := db.Get(ctx, nsApp, keyNodeKnown)
	if err != nil {
		t.Fatalf("the runtime's identity was not kept: %v", err)
	}
	var known runner.KnownIdentity
	if err := json.Unmarshal(raw, &known); err != nil || known.Path != pin.Path || known.SHA256 != pin.SHA256 || known.Ino == 0 {
		t.Fatalf("kept identity: %s %v", raw, err)
	}
	// Another pin of the same file is hashed, not trusted: its digest is
	// not the kept one.
	wrong := pin
	wrong.SHA256 = strings.Repeat("0", 64)
	if err := env(wrong).RuntimeCheck()(); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("a wrong pin passed: %v", err)
	}
	// The kept identity is what the next process consults: one naming
	// the wrong digest (as only a writer of the database, who could change
	// the pin itself, could store) is trusted for it without hashing.
	known.SHA256 = wrong.SHA256
	b, _ := json.Marshal(known)
	if err := db.Put(ctx, nsApp, keyNodeKnown, b); err != nil {
		t.Fatal(err)
	}
	if err := env(wrong).RuntimeCheck()(); err != nil {
		t.Fatalf("the kept identity was not consulted: %v", err)
	}
	// An unreadable kept identity means hashing again.
	if err := db.Put(ctx, nsApp, keyNodeKnown, []byte(`{"path":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := env(wrong).RuntimeCheck()(); err == nil {
		t.Fatal("a wrong pin passed with an unreadable kept identity")
	}
	if err := env(pin).RuntimeCheck()(); err != nil {
		t.Fatal(err)
	}
}

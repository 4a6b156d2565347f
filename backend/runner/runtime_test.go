package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindNode(t *testing.T) {
	env := map[string]string{"GATEHOUSE_NODE": "relative/node"}
	if _, err := FindNode(func(k string) string { return env[k] }); err == nil {
		t.Fatal("relative GATEHOUSE_NODE accepted")
	}
	env["GATEHOUSE_NODE"] = "/opt/node/bin/node"
	if p, err := FindNode(func(k string) string { return env[k] }); err != nil || p != "/opt/node/bin/node" {
		t.Fatalf("GATEHOUSE_NODE: %s %v", p, err)
	}
}

func TestPinAndCheckRealNode(t *testing.T) {
	path, err := FindNode(func(string) string { return "" })
	if err != nil {
		t.Skip("node not installed:", err)
	}
	// Pin through a symlink: the pin records the real file. testSup owns
	// this process's child waits (its wait4(-1) reaps any child), so the
	// pins here go through it with Runner.Pin: PinNode's os/exec wait
	// would race the reaper and fail with "waitid: no child processes".
	// (TestMain pins with PinNode before the supervisor exists.)
	link := filepath.Join(t.TempDir(), "node")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	pin, err := testRunner.Pin(context.Background(), link)
	if err != nil {
		t.Fatal(err)
	}
	if pin.Path == link || !strings.HasPrefix(pin.Version, "v") || len(pin.SHA256) != 64 {
		t.Fatalf("pin %+v", pin)
	}
	if err := pin.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckDetectsChangedOrMissingBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "node")
	os.WriteFile(bin, []byte("#!/bin/sh\necho v20.0.0\n"), 0o755)
	pin, err := testRunner.Pin(context.Background(), bin) // not PinNode: see TestPinAndCheckRealNode
	if err != nil {
		t.Fatal(err)
	}
	if pin.Version != "v20.0.0" {
		t.Fatalf("version %q", pin.Version)
	}
	if err := pin.Check(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(bin, []byte("#!/bin/sh\necho v20.0.0 # swapped\n"), 0o755)
	if err := pin.Check(); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("changed binary: %v", err)
	}
	os.Remove(bin)
	if err := pin.Check(); err == nil {
		t.Fatal("missing binary passed")
	}
	if err := (Pin{}).Check(); err == nil {
		t.Fatal("empty pin passed")
	}
	os.WriteFile(bin, []byte("#!/bin/sh\necho not-a-version\n"), 0o755)
	if _, err := testRunner.Pin(context.Background(), bin); err == nil {
		t.Fatal("bogus version accepted")
	}
}

package library

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The verifier's digest is of the code that is running, not of whatever
// file is at its path now: a package upgrade replaces the executable under
// a running Gatehouse, and marks that old code wrote under the new
// build's digest would let the new build skip its own (maybe stricter)
// verification of those bytes. The helper process computes the digest
// after its executable's path was given other bytes.
func TestVerifierDigestIsOfTheRunningExecutable(t *testing.T) {
	if os.Getenv("GATEHOUSE_TEST_VERIFIER_HELPER") == "1" {
		bufio.NewReader(os.Stdin).ReadString('\n') // the parent has replaced the file
		var v ExecutableDigest
		fmt.Println("digest=" + v.ID())
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	orig, err := os.ReadFile(self)
	if err != nil {
		t.Skip(err)
	}
	exe := filepath.Join(t.TempDir(), "gatehouse")
	if err := os.WriteFile(exe, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestVerifierDigestIsOfTheRunningExecutable$")
	cmd.Env = append(os.Environ(), "GATEHOUSE_TEST_VERIFIER_HELPER=1")
	stdin, _ := cmd.StdinPipe()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// An upgrade: new bytes are renamed over the running file's path.
	if err := os.WriteFile(exe+".new", []byte("another build of Gatehouse"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(exe+".new", exe); err != nil {
		t.Fatal(err)
	}
	stdin.Write([]byte("go\n"))
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out.Bytes())
	}
	sum := sha256.Sum256(orig)
	if want := "digest=" + hex.EncodeToString(sum[:]); !strings.Contains(out.String(), want+"\n") {
		t.Fatalf("the verifier digest is not the running executable's: want %s, helper printed\n%s", want, out.Bytes())
	}
}

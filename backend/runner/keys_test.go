package runner

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/attest"
	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/policy"
)

// buildGatehouse builds the real gatehouse binary into dir (the CLI a
// script would find installed next to the app).
func buildGatehouse(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "gatehouse")
	cmd := exec.Command("go", "build", "-o", bin, "../..")
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build gatehouse: %v\n%s", err, out)
	}
	return bin
}

// probeIn is probe with the attempt's workspace set to ws.
func probeIn(t *testing.T, r *Runner, ws string, in map[string]any) string {
	t.Helper()
	_, ex := testBundle(t, "probe.mjs", map[string]any{"timeoutMs": 20000})
	b, _ := json.Marshal(in)
	req := request(t, ex, string(b))
	w, err := ResolveWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	req.Workspace = w
	res := r.Run(context.Background(), req)
	wantStatus(t, res, StatusSucceeded, "")
	var out struct{ Echo string }
	json.Unmarshal(res.Envelope.Output, &out)
	return out.Echo
}

// The installation's signing key (DATA/signing/current.key) and the
// receipt key (DATA/receipt.key), made by their real owners in the data
// directory the runner's receivers live in, are never readable by a
// confined script, and a confined script cannot use the real gatehouse
// CLI (copied into its own workspace, where it may execute) to mint an
// attestation with them. With confinement off the same script reads both
// keys and mints an attestation that verifies as this installation's, so
// the test sees the difference.
func TestSigningAndReceiptKeysUnreadableByAConfinedScript(t *testing.T) {
	if _, err := runnerWith(t, "", confinedOn).Confinement(confinedOn); err != nil {
		t.Skip("confinement unavailable here:", err)
	}
	dataDir := filepath.Dir(testRunsDir)
	ring, err := attest.Open(filepath.Join(dataDir, "signing"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ring.Signer() // makes signing/current.key on first use
	if err != nil {
		t.Fatal(err)
	}
	receiptKey := filepath.Join(dataDir, policy.ReceiptKeyFile)
	if _, err := policy.LoadReceiptKey(receiptKey); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{ring.PrivateKeyPath(), receiptKey} {
		if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v", f, fi, err)
		}
	}
	evidenceFile, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "evidence-envelope", "valid-capture-printf.json"))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildGatehouse(t, t.TempDir())

	for _, conf := range []confine.Settings{confinedOn, confinedOff} {
		t.Run(conf.Filesystem, func(t *testing.T) {
			r := runnerWith(t, "", conf)
			ws := t.TempDir()
			cli := filepath.Join(ws, "gatehouse")
			if b, err := os.ReadFile(bin); err != nil {
				t.Fatal(err)
			} else if err := os.WriteFile(cli, b, 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(ws, "capture.json"), evidenceFile, 0o644)
			out := filepath.Join(ws, "capture.json.intoto.jsonl")
			reads := map[string]string{
				"signing key": probeIn(t, r, ws, map[string]any{"action": "read", "path": ring.PrivateKeyPath()}),
				"receipt key": probeIn(t, r, ws, map[string]any{"action": "read", "path": receiptKey}),
			}
			mint := probeIn(t, r, ws, map[string]any{"action": "exec", "path": cli,
				"args": []string{"evidence", "attest", filepath.Join(ws, "capture.json")},
				"env":  map[string]string{"GATEHOUSE_DATA_DIR": dataDir}, "out": out})
			t.Logf("reads %v; gatehouse evidence attest: %s", reads, mint)
			if conf == confinedOn {
				for what, got := range reads {
					if got != "EACCES" {
						t.Errorf("a confined script reading the %s got %q, want EACCES", what, got)
					}
				}
				// The CLI itself ran (it is in the workspace) and was stopped
				// at the data directory, not at its own exec.
				if !strings.HasPrefix(mint, "exit ") || !strings.Contains(mint, "permission denied") {
					t.Errorf("a confined gatehouse evidence attest: %q, want a permission-denied exit", mint)
				}
				if _, err := os.Stat(out); err == nil {
					t.Error("a confined script wrote an attestation")
				}
				return
			}
			for what, got := range reads {
				if got != "ok" {
					t.Fatalf("an unconfined script could not read the %s (%s): the test would not see confinement", what, got)
				}
			}
			if mint != "ok" {
				t.Fatalf("an unconfined gatehouse evidence attest failed (%s): the test would not see confinement", mint)
			}
			att, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			e, perr := evidence.Parse(evidenceFile)
			if len(perr) != 0 {
				t.Fatal(perr)
			}
			res, issues := attest.Verify(context.Background(), att, evidenceFile, e, attest.Trust{Installation: []attest.PublicKey{signer.Public()}})
			if len(issues) != 0 {
				t.Fatalf("the unconfined script's attestation does not verify as this installation's: %v", issues)
			}
			t.Logf("unconfined: minted an attestation signed by %s (%s)", res.Fingerprint, res.SignedBy)
		})
	}
}

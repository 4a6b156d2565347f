package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPolicyGetSet(t *testing.T) {
	env := dataEnv(t)
	got := decode[map[string]any](t, cli(t, env, "policy", "get", "--json").stdout)
	if got["mode"] != "ask" || got["safeMode"] != false {
		t.Fatalf("default policy %v", got)
	}
	file := filepath.Join(t.TempDir(), "p.json")
	rev := "sha256:" + strings.Repeat("ab", 32)
	os.WriteFile(file, []byte(fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":false,"trusted":[{"revision":%q,"agentId":"local","workspace":"/w","timeoutMsCeiling":5000,"maxOutputBytesCeiling":1000,"receiptId":"forged","approvedAt":"2000-01-01T00:00:00Z"}]}`, rev)), 0o644)
	r := cli(t, env, "policy", "set", file)
	if r.status != 0 {
		t.Fatal(r.stderr)
	}
	set := decode[struct {
		Trusted []struct {
			ReceiptID  *string `json:"receiptId"`
			ApprovedAt *string `json:"approvedAt"`
		}
	}](t, r.stdout)
	if set.Trusted[0].ReceiptID == nil || *set.Trusted[0].ReceiptID == "forged" || strings.HasPrefix(*set.Trusted[0].ApprovedAt, "2000") {
		t.Fatalf("receipt %+v", set.Trusted[0])
	}
	before := cli(t, env, "policy", "get", "--json").stdout

	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"mode":"ask","safeMode":false,"trusted":[{"revision":"nope","agentId":"local","workspace":"rel","timeoutMsCeiling":1,"maxOutputBytesCeiling":1}]}`), 0o644)
	r = cli(t, env, "policy", "set", bad)
	e := decode[struct {
		Code    string
		Details []struct{ Path string }
	}](t, r.stderr)
	if r.status == 0 || e.Code != "invalid_policy" || len(e.Details) != 3 || e.Details[0].Path != "$.trusted[0].revision" {
		t.Fatalf("status %d %s", r.status, r.stderr)
	}
	if after := cli(t, env, "policy", "get", "--json").stdout; after != before {
		t.Fatalf("rejected policy changed state:\n%s\n%s", before, after)
	}
	human := cli(t, env, "policy", "get")
	if !strings.Contains(human.stdout, "receipt ") || !strings.Contains(human.stdout, "trusted_revisions") {
		t.Fatal(human.stdout)
	}
}

func TestAgentCommands(t *testing.T) {
	env := dataEnv(t)
	r := cli(t, env, "agent", "add", "claude-desktop", "--json")
	added := decode[struct{ ID, Name, Token string }](t, r.stdout)
	if r.status != 0 || added.Name != "claude-desktop" || !strings.HasPrefix(added.Token, "gha_") {
		t.Fatalf("%d %s %s", r.status, r.stdout, r.stderr)
	}
	list := cli(t, env, "agent", "list", "--json")
	if strings.Contains(list.stdout, added.Token) || !strings.Contains(list.stdout, "claude-desktop") || !strings.Contains(list.stdout, `"local"`) {
		t.Fatalf("list: %s", list.stdout)
	}
	if r := cli(t, env, "agent", "add", "claude-desktop"); r.status == 0 {
		t.Fatal("duplicate name accepted")
	}
	for _, args := range [][]string{{"disable", "claude-desktop"}, {"enable", added.ID}, {"remove", "claude-desktop"}} {
		if r := cli(t, env, append([]string{"agent"}, args...)...); r.status != 0 {
			t.Fatalf("%v: %s", args, r.stderr)
		}
	}
	for _, args := range [][]string{{"remove", "local"}, {"disable", "local"}, {"remove", "claude-desktop"}} {
		if r := cli(t, env, append([]string{"agent"}, args...)...); r.status == 0 {
			t.Fatalf("%v succeeded", args)
		}
	}
}

// With a trusted scope for the local user, skill run needs no terminal
// (in process, with no controlling terminal).
func TestTrustedScopeRunsWithoutTerminal(t *testing.T) {
	skill := markerBundle(t)
	ws := t.TempDir()
	env := dataEnv(t)
	run := func(args ...string) (string, string, error) {
		r := cliWith(t, env, cliOptions{stdin: `{"note":"trusted"}`}, args...)
		var err error
		if r.status != 0 {
			err = fmt.Errorf("exit status %d", r.status)
		}
		return r.stdout, r.stderr, err
	}
	out, _, _ := run("skill", "inspect", skill, "--json")
	rev := decode[SkillInspection](t, out).Execution.Revision
	realWS, _ := filepath.EvalSymlinks(ws)
	policyFile := filepath.Join(t.TempDir(), "p.json")
	os.WriteFile(policyFile, []byte(fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":false,"trusted":[{"revision":%q,"agentId":"local","workspace":%q,"timeoutMsCeiling":5000,"maxOutputBytesCeiling":1024}]}`, rev, realWS)), 0o644)
	if _, stderr, err := run("policy", "set", policyFile); err != nil {
		t.Fatal(stderr)
	}
	out, stderr, err := run("skill", "run", skill, "--input", "-", "--workspace", ws)
	var e map[string]any
	json.Unmarshal([]byte(out), &e)
	if err != nil || e["status"] != "succeeded" {
		t.Fatalf("%v %s %s", err, out, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "ran")); string(b) != `{"note":"trusted"}` {
		t.Fatal("script did not run")
	}
	// Another workspace is outside the scope: back to asking, and no terminal.
	_, stderr, err = run("skill", "run", skill, "--input", "-", "--workspace", t.TempDir())
	if err == nil || !strings.Contains(stderr, "permission_required") {
		t.Fatalf("outside the scope: %v %s", err, stderr)
	}
	// Safe mode stops even trusted runs.
	os.WriteFile(policyFile, []byte(fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":true,"trusted":[{"revision":%q,"agentId":"local","workspace":%q,"timeoutMsCeiling":5000,"maxOutputBytesCeiling":1024}]}`, rev, realWS)), 0o644)
	run("policy", "set", policyFile)
	out, _, err = run("skill", "run", skill, "--input", "-", "--workspace", ws)
	json.Unmarshal([]byte(out), &e)
	if err == nil || e["status"] != "refused" || !strings.Contains(out, "safe_mode") {
		t.Fatalf("safe mode: %v %s", err, out)
	}
}

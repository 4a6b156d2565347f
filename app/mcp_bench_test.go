package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/runner"
)

// copyTree copies the files of src into dst.
func copyTree(b testing.TB, src, dst string) {
	b.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// hundredSkills is a root with 100 runnable skills (copies of
// text-metrics under their own names).
func hundredSkills(b testing.TB) string {
	root := b.TempDir()
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("metrics-%03d", i)
		dir := filepath.Join(root, name)
		copyTree(b, filepath.Join("..", "bundles", "text-metrics"), dir)
		md, err := os.ReadFile(filepath.Join(dir, "SKILL.md"))
		if err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(replaceName(string(md), name)), 0o644)
	}
	return root
}

func replaceName(md, name string) string {
	const key = "\nname: text-metrics\n"
	if i := indexOf(md, key); i >= 0 {
		return md[:i] + "\nname: " + name + "\n" + md[i+len(key):]
	}
	return md
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// BenchmarkMCPListSkills100 is list_skills over MCP with 100 skills,
// warm (the catalog was listed once before). Report: ns/op.
func BenchmarkMCPListSkills100(b *testing.B) {
	ts := startServer(b)
	if _, err := ts.facade.SetSkillRoots(SetSkillRootsArgs{Roots: []string{hundredSkills(b)}}); err != nil {
		b.Fatal(err)
	}
	_, cs := connectAgent(b, ts, "bench")
	call := func() {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_skills", Arguments: map[string]any{}})
		if err != nil || r.IsError {
			b.Fatalf("%v %v", err, r)
		}
		if n := len(r.StructuredContent.(map[string]any)["skills"].([]any)); n < 100 {
			b.Fatalf("%d skills listed", n)
		}
	}
	call() // warm
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call()
	}
}

// The inspection cache is keyed by content: a script changed to import a
// bare package is refused at the next list_skills, and the original bytes
// are runnable again at once.
func TestMCPInspectionCacheSeesChanges(t *testing.T) {
	ts := startServer(t)
	root := t.TempDir()
	dir := filepath.Join(root, "text-metrics")
	copyTree(t, filepath.Join("..", "bundles", "text-metrics"), dir)
	if _, err := ts.facade.SetSkillRoots(SetSkillRootsArgs{Roots: []string{root}}); err != nil {
		t.Fatal(err)
	}
	_, cs := connectAgent(t, ts, "cache")
	runnable := func() (bool, any) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_skills", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range structured(t, res)["skills"].([]any) {
			m := r.(map[string]any)
			if m["name"] == "text-metrics" && m["runnable"] != nil {
				return m["runnable"].(bool), m["issue"]
			}
		}
		t.Fatal("text-metrics not listed")
		return false, nil
	}
	if ok, issue := runnable(); !ok {
		t.Fatalf("the copy is not runnable: %v", issue)
	}
	script := filepath.Join(dir, "scripts", "run.cjs")
	orig, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, append([]byte("require('left-pad');\n"), orig...), 0o644); err != nil {
		t.Fatal(err)
	}
	ok, issue := runnable()
	if ok || issue == nil || issue.(map[string]any)["code"] != "undeclared_import" {
		t.Fatalf("a changed script was not re-inspected: runnable %v, issue %v", ok, issue)
	}
	os.WriteFile(script, orig, 0o644)
	if ok, issue := runnable(); !ok {
		t.Fatalf("the original bytes are refused: %v", issue)
	}
}

// trustedBench prepares a server whose policy trusts text-metrics for a
// new agent in ws, and a connected MCP client of that agent.
func trustedBench(b *testing.B) (*testServer, *mcp.ClientSession, string, string) {
	ts := startServer(b)
	ws := b.TempDir()
	agentID, tok := addAgent(b, ts, "bench")
	ins, _ := ts.facade.InspectSkill(InspectSkillArgs{Name: "text-metrics"})
	real, _ := resolveForTest(ws)
	if _, err := ts.facade.SetPolicy(SetPolicyArgs{Policy: json.RawMessage(fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":false,"trusted":[{"revision":%q,"agentId":%q,"workspace":%q,"timeoutMsCeiling":5000,"maxOutputBytesCeiling":16384}]}`,
		ins.Execution.Revision, agentID, real))}); err != nil {
		b.Fatal(err)
	}
	cs := mcpConnect(b, ts, tok)
	b.Cleanup(func() { cs.Close() })
	return ts, cs, agentID, ws
}

// BenchmarkRunSkillTrustedMCP is run_skill of a trusted skill over MCP;
// compare with BenchmarkRunSkillTrustedInProcess (the same pipeline
// called directly): the ratio is the MCP overhead.
func BenchmarkRunSkillTrustedMCP(b *testing.B) {
	_, cs, _, ws := trustedBench(b)
	call := func() {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_skill", Arguments: map[string]any{
			"name": "text-metrics", "input": map[string]any{"text": "one two three"}, "workspace": ws}})
		if err != nil || r.IsError {
			b.Fatalf("%v %v", err, r)
		}
	}
	call()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call()
	}
}

// BenchmarkRunSkillTrustedInProcess runs the same trusted request through
// the consent pipeline and runner in this process.
func BenchmarkRunSkillTrustedInProcess(b *testing.B) {
	ts, _, agentID, ws := trustedBench(b)
	f := ts.facade
	sk, err := f.env.resolveSkill(context.Background(), "text-metrics")
	if err != nil {
		b.Fatal(err)
	}
	runID := f.consent.StartRun(agentID)
	call := func() {
		w, err := runner.ResolveWorkspace(ws)
		if err != nil {
			b.Fatal(err)
		}
		creq := &consent.Request{AgentID: agentID, RunID: runID, Skill: sk.Name, Execution: f.env.inspectExecution(sk),
			Invocation: []byte(`{"text":"one two three"}`), Workspace: w, Pin: *f.env.Pin}
		if res := f.pipeline.Execute(context.Background(), creq); res.Envelope.Status != runner.StatusSucceeded {
			b.Fatalf("%+v", res.Envelope)
		}
	}
	call()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		call()
	}
}

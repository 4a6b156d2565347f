package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClient connects the official Go SDK client to the server with token.
func mcpClient(t testing.TB, ts *testServer, token string, onProgress func(*mcp.ProgressNotificationClientRequest)) (*mcp.ClientSession, error) {
	t.Helper()
	return mcpClientWith(t, ts, token, &mcp.ClientOptions{
		ProgressNotificationHandler: func(ctx context.Context, r *mcp.ProgressNotificationClientRequest) {
			if onProgress != nil {
				onProgress(r)
			}
		},
	})
}

// mcpClientWith connects the Go SDK client with opts and the agent token.
func mcpClientWith(t testing.TB, ts *testServer, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, opts)
	tr := &mcp.StreamableClientTransport{Endpoint: ts.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}}
	return c.Connect(context.Background(), tr, nil)
}

// mcpConnect is mcpClient without a progress handler for a test that
// must connect: a refused connection ends the test. The caller closes the
// session.
func mcpConnect(t testing.TB, ts *testServer, token string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpClient(t, ts, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// connectAgent adds an agent named name (allowed to execute skills) and
// connects an MCP session with its token, closed when the test ends; it
// returns the agent's id and the session.
func connectAgent(t testing.TB, ts *testServer, name string) (string, *mcp.ClientSession) {
	t.Helper()
	agentID, tok := addAgent(t, ts, name)
	cs := mcpConnect(t, ts, tok)
	t.Cleanup(func() { cs.Close() })
	return agentID, cs
}

// listTools lists the tools cs offers; a failed listing ends the test.
func listTools(t *testing.T, cs *mcp.ClientSession) *mcp.ListToolsResult {
	t.Helper()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

func addAgent(t testing.TB, ts *testServer, name string) (string, string) {
	t.Helper()
	res, err := ts.facade.AddAgent(AddAgentArgs{Name: name, CanExecuteSkills: true})
	if err != nil {
		t.Fatal(err)
	}
	return res.Agent.ID, res.Token
}

// approver decides every proposal raised for agentID the way the person in
// the app would, through the facade.
func approver(t *testing.T, ts *testServer, agentID string, approve bool) func() {
	events, stop := ts.facade.events.subscribe(64)
	go func() {
		for e := range events {
			m, ok := e.Data.(map[string]any)
			if e.Name != "proposal" || !ok || m["type"] != "raised" {
				continue
			}
			v := m["proposal"].(ProposalView)
			if v.Agent.ID == agentID {
				ts.facade.Decide(DecideArgs{ProposalID: v.ID, Approve: approve})
			}
		}
	}()
	return stop
}

func callRun(t *testing.T, cs *mcp.ClientSession, ws string, progress bool) map[string]any {
	t.Helper()
	params := &mcp.CallToolParams{Name: "run_skill", Arguments: map[string]any{"name": "text-metrics", "input": map[string]any{"text": "one two three"}, "workspace": ws}}
	if progress {
		params.SetProgressToken("p1")
	}
	res, err := cs.CallTool(context.Background(), params)
	if err != nil {
		return map[string]any{"callError": err.Error()}
	}
	return structured(t, res)
}

func firstCode(env map[string]any) string {
	errs, _ := env["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	return errs[0].(map[string]any)["code"].(string)
}

func TestMCPToolsAndTokens(t *testing.T) {
	ts := startServer(t)
	_, token := addAgent(t, ts, "agent-a")
	cs := mcpConnect(t, ts, token)
	defer cs.Close()
	tools := listTools(t, cs)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "await_run,capture_process_scenario,compare_process_captures,list_skills,propose_workflow,read_skill,read_skill_resource,run_replay_machine,run_skill" {
		t.Fatalf("tools %v", names)
	}
	for _, n := range names {
		for _, forbidden := range []string{"policy", "agent", "setting", "trust", "scope"} {
			if strings.Contains(n, forbidden) {
				t.Fatalf("tool %s reaches %s", n, forbidden)
			}
		}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_skill_resource", Arguments: map[string]any{"name": "memory-organization", "path": "../../gatehouse.db"}})
	if err != nil || !res.IsError {
		t.Fatalf("path escape allowed: %v %v", err, res)
	}
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_skill_resource", Arguments: map[string]any{"name": "memory-organization", "path": "references/REFERENCE.md"}})
	if res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "#") {
		t.Fatalf("read resource: %v", res)
	}

	for name, tok := range map[string]string{"wrong token": "gha_" + strings.Repeat("A", 43), "UI token": ts.token, "no token": ""} {
		if cs2, err := mcpClient(t, ts, tok, nil); err == nil {
			cs2.Close()
			t.Errorf("%s: connected", name)
		}
	}
	id, tok2 := addAgent(t, ts, "agent-disabled")
	ts.facade.SetAgentDisabled(SetAgentDisabledArgs{ID: id, Disabled: true})
	if cs2, err := mcpClient(t, ts, tok2, nil); err == nil {
		cs2.Close()
		t.Error("disabled agent connected")
	}
	// An agent token opens nothing on the UI API.
	if status, _ := ts.do(t, req{method: "POST", path: "/api/GetPolicy", body: "{}", origin: ts.origin(), token: token}); status != 403 {
		t.Errorf("agent token on the UI API: %d", status)
	}
}

func TestMCPRunSkillDecisions(t *testing.T) {
	ts := startServer(t)
	agentID, cs := connectAgent(t, ts, "agent-run")
	ws := t.TempDir()

	stop := approver(t, ts, agentID, true)
	env := callRun(t, cs, ws, true)
	stop()
	if env["status"] != "succeeded" || env["output"].(map[string]any)["words"].(float64) != 3 {
		t.Fatalf("approved run: %v", env)
	}
	stop = approver(t, ts, agentID, false)
	env = callRun(t, cs, ws, false)
	stop()
	if env["status"] != "refused" || firstCode(env) != "denied" {
		t.Fatalf("denied run: %v", env)
	}
	for mode, code := range map[string]string{`{"mode":"blocked","safeMode":false,"trusted":[]}`: "blocked", `{"mode":"ask","safeMode":true,"trusted":[]}`: "safe_mode"} {
		ts.facade.SetPolicy(SetPolicyArgs{Policy: json.RawMessage(mode)})
		if env := callRun(t, cs, ws, false); env["status"] != "refused" || firstCode(env) != code {
			t.Fatalf("%s: %v", code, env)
		}
	}
	// Trusted scope: no dialog at all (nobody approves here).
	ins, _ := ts.facade.InspectSkill(InspectSkillArgs{Name: "text-metrics"})
	real, _ := resolveForTest(ws)
	ts.facade.SetPolicy(SetPolicyArgs{Policy: json.RawMessage(fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":false,"trusted":[{"revision":%q,"agentId":%q,"workspace":%q,"timeoutMsCeiling":5000,"maxOutputBytesCeiling":16384}]}`,
		ins.Execution.Revision, agentID, real))})
	if env := callRun(t, cs, ws, false); env["status"] != "succeeded" {
		t.Fatalf("trusted scope: %v", env)
	}
}

// Two sessions of two agents: each proposal shows its own agent, and a
// decision for one never authorizes the other; disconnecting a session
// cancels its pending proposal.
func TestMCPSessionsNeverCross(t *testing.T) {
	ts := startServer(t)
	aID, aTok := addAgent(t, ts, "agent-one")
	bID, bTok := addAgent(t, ts, "agent-two")
	csA, _ := mcpClient(t, ts, aTok, nil)
	csB, err := mcpClient(t, ts, bTok, nil)
	if err != nil || csA == nil {
		t.Fatal(err)
	}
	defer csA.Close()
	events, stopEvents := ts.facade.events.subscribe(64)
	defer stopEvents()
	var wg sync.WaitGroup
	results := map[string]map[string]any{}
	var mu sync.Mutex
	for name, cs := range map[string]*mcp.ClientSession{"a": csA, "b": csB} {
		wg.Add(1)
		go func(name string, cs *mcp.ClientSession) {
			defer wg.Done()
			env := callRun(t, cs, t.TempDir(), false)
			mu.Lock()
			results[name] = env
			mu.Unlock()
		}(name, cs)
	}
	raised := map[string]ProposalView{}
	deadline := time.After(20 * time.Second)
	for len(raised) < 2 {
		select {
		case e := <-events:
			if m, ok := e.Data.(map[string]any); ok && e.Name == "proposal" && m["type"] == "raised" {
				v := m["proposal"].(ProposalView)
				raised[v.Agent.ID] = v
			}
		case <-deadline:
			t.Fatalf("proposals raised: %v", raised)
		}
	}
	if raised[aID].RunID == raised[bID].RunID || raised[aID].Agent.Name != "agent-one" {
		t.Fatalf("runs crossed: %+v", raised)
	}
	// Approve A only; B's session disconnects while its proposal waits.
	ts.facade.Decide(DecideArgs{ProposalID: raised[aID].ID, Approve: true})
	start := time.Now()
	csB.Close()
	wg.Wait()
	if time.Since(start) > 30*time.Second {
		t.Fatalf("disconnect did not end the waiting call (%v)", time.Since(start))
	}
	if results["a"]["status"] != "succeeded" {
		t.Fatalf("a: %v", results["a"])
	}
	pending, _ := ts.facade.PendingProposals(Empty{})
	if len(pending.Proposals) != 0 {
		t.Fatalf("a disconnected session left a pending proposal: %+v", pending.Proposals)
	}
}

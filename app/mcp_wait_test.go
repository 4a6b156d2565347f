package app

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pendingProposal waits for the one pending proposal of agentID.
func pendingProposal(t *testing.T, ts *testServer, agentID string) ProposalView {
	t.Helper()
	var got ProposalView
	waitFor(t, "a pending proposal", func() bool {
		p, _ := ts.facade.PendingProposals(Empty{})
		for _, v := range p.Proposals {
			if v.Agent.ID == agentID {
				got = v
				return true
			}
		}
		return false
	})
	return got
}

// While the person takes their time, a call with a progress token gets a
// keep-alive at least every KeepAlive and one notification per lifecycle
// step; the person decides after ten intervals and the run completes.
func TestMCPKeepAliveWhileWaiting(t *testing.T) {
	ts := startServer(t)
	ts.mcp.limits.KeepAlive = 100 * time.Millisecond
	agentID, tok := addAgent(t, ts, "patient")
	var mu sync.Mutex
	var msgs []string
	var last float64
	monotonic := true
	cs, err := mcpClient(t, ts, tok, func(r *mcp.ProgressNotificationClientRequest) {
		mu.Lock()
		defer mu.Unlock()
		if r.Params.Progress <= last {
			monotonic = false
		}
		last = r.Params.Progress
		msgs = append(msgs, r.Params.Message)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	done := make(chan map[string]any, 1)
	go func() { done <- callRun(t, cs, t.TempDir(), true) }()
	p := pendingProposal(t, ts, agentID)
	waitFor(t, "ten keep-alives", func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, m := range msgs {
			if strings.HasPrefix(m, "waiting for approval in Gatehouse, expires in 4:") {
				n++
			}
		}
		return n >= 10
	})
	ts.facade.Decide(DecideArgs{ProposalID: p.ID, Approve: true})
	env := <-done
	if env["status"] != "succeeded" {
		t.Fatalf("run after a long wait: %v", env)
	}
	// The server sends every step before the result on the same stream,
	// but the SDK client may run the progress handler for the last ones
	// after CallTool has returned: wait for them, with waitFor's deadline.
	for _, step := range []string{"proposed: waiting for approval", "decided: approved", "staged", "spawned", "exited", "cleaned"} {
		waitFor(t, "a "+step+" notification", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return strings.Contains(strings.Join(msgs, "\n"), step)
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if !monotonic {
		t.Error("progress values did not increase")
	}
}

// A client with no progress token (a host with a fixed timeout) gets
// awaiting_decision with a ticket when its budget runs out, and await_run
// resumes the same proposal until the run completes.
func TestMCPTwoStepWithoutProgressToken(t *testing.T) {
	ts := startServer(t)
	agentID, cs := connectAgent(t, ts, "fixed-timeout")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_skill", Arguments: map[string]any{
		"name": "text-metrics", "input": map[string]any{"text": "one two three"}, "workspace": t.TempDir(), "wait_ms": 300}})
	if err != nil {
		t.Fatal(err)
	}
	first := structured(t, res)
	if res.IsError || first["status"] != "awaiting_decision" || first["ticket"] == "" || first["proposal_id"] == "" {
		t.Fatalf("first call: %v", first)
	}
	again, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "await_run", Arguments: map[string]any{"ticket": first["ticket"], "wait_ms": 200}})
	if err != nil {
		t.Fatal(err)
	}
	second := structured(t, again)
	if second["status"] != "awaiting_decision" || second["ticket"] != first["ticket"] || second["proposal_id"] != first["proposal_id"] {
		t.Fatalf("second wait is not the same request: %v vs %v", second, first)
	}
	p := pendingProposal(t, ts, agentID)
	if p.ID != first["proposal_id"] {
		t.Fatalf("pending %s, ticket's %v", p.ID, first["proposal_id"])
	}
	ts.facade.Decide(DecideArgs{ProposalID: p.ID, Approve: true})
	fin, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "await_run", Arguments: map[string]any{"ticket": first["ticket"]}})
	if err != nil {
		t.Fatal(err)
	}
	if env := structured(t, fin); fin.IsError || env["status"] != "succeeded" {
		t.Fatalf("resumed run: %v", env)
	}
	// A ticket's result is handed out once.
	gone, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "await_run", Arguments: map[string]any{"ticket": first["ticket"]}})
	if !gone.IsError || !strings.Contains(textOf(gone), "unknown_ticket") {
		t.Fatalf("second read of a ticket: %v", textOf(gone))
	}
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// With no app window open, the agent is told at once: without a progress
// token the call returns awaiting_decision immediately (the default budget
// is 25 s); with one, a progress notification says so.
func TestMCPNoWindowToldAtOnce(t *testing.T) {
	ts := startServer(t)
	ts.closeWindow()
	agentID, tok := addAgent(t, ts, "alone")
	notes := make(chan string, 64)
	cs, err := mcpClient(t, ts, tok, func(r *mcp.ProgressNotificationClientRequest) { notes <- r.Params.Message })
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_skill", Arguments: map[string]any{
		"name": "text-metrics", "input": map[string]any{"text": "x"}, "workspace": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	out := structured(t, res)
	if out["status"] != "awaiting_decision" || out["window_open"] != false || !strings.Contains(out["message"].(string), "no Gatehouse window is open") {
		t.Fatalf("no window, no token: %v", out)
	}
	// The request still stands: a page opens and the person approves.
	reopen := ts.mcp.windows.open()
	defer reopen()
	ts.facade.Decide(DecideArgs{ProposalID: pendingProposal(t, ts, agentID).ID, Approve: true})
	fin, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "await_run", Arguments: map[string]any{"ticket": out["ticket"]}})
	if env := structured(t, fin); env["status"] != "succeeded" {
		t.Fatalf("after the window opened: %v", env)
	}
	reopen()

	params := &mcp.CallToolParams{Name: "run_skill", Arguments: map[string]any{"name": "text-metrics", "input": map[string]any{"text": "x"}, "workspace": t.TempDir()}}
	params.SetProgressToken("w")
	waiting, stop := context.WithCancel(ctx)
	defer stop() // before Close, which waits for the client's calls
	go cs.CallTool(waiting, params)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m := <-notes:
			if strings.Contains(m, "no Gatehouse window is open") {
				return
			}
		case <-deadline:
			t.Fatal("no notification that no window is open")
		}
	}
}

// A waiting call the agent cancels is recorded as cancelled, and its
// proposal is cancelled (not permission_required).
func TestMCPCancelledWaitRecordedCancelled(t *testing.T) {
	ts := startServer(t)
	agentID, cs := connectAgent(t, ts, "impatient")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	params := &mcp.CallToolParams{Name: "run_skill", Arguments: map[string]any{"name": "text-metrics", "input": map[string]any{"text": "x"}, "workspace": t.TempDir()}}
	params.SetProgressToken("c")
	go func() { _, err := cs.CallTool(ctx, params); done <- err }()
	p := pendingProposal(t, ts, agentID)
	cancel()
	<-done
	waitFor(t, "the cancelled request in history", func() bool {
		runs, _ := ts.facade.ListRuns(ListRunsArgs{Skill: "text-metrics"})
		return len(runs.Runs) == 1
	})
	runs, _ := ts.facade.ListRuns(ListRunsArgs{Skill: "text-metrics"})
	var env map[string]any
	json.Unmarshal(runs.Runs[0].Envelope, &env)
	if firstCode(env) != "cancelled" {
		t.Fatalf("a cancelled wait recorded as %v", env)
	}
	if got, _ := ts.facade.consent.Get(p.ID); got.State != "cancelled" {
		t.Fatalf("proposal state %s", got.State)
	}
}

// Two parallel run_skill calls for one skill on one connection: the first
// ends with a clear superseded refusal, the second waits and runs.
func TestMCPParallelCallSuperseded(t *testing.T) {
	ts := startServer(t)
	agentID, cs := connectAgent(t, ts, "twice")
	first := make(chan map[string]any, 1)
	go func() { first <- callRun(t, cs, t.TempDir(), true) }()
	p1 := pendingProposal(t, ts, agentID)
	second := make(chan map[string]any, 1)
	go func() { second <- callRun(t, cs, t.TempDir(), true) }()
	env := <-first
	errs, _ := env["errors"].([]any)
	if firstCode(env) != "superseded" || len(errs) == 0 || !strings.Contains(errs[0].(map[string]any)["message"].(string), "newer request") {
		t.Fatalf("first call: %v", env)
	}
	p2 := pendingProposal(t, ts, agentID)
	if p2.ID == p1.ID {
		t.Fatal("same proposal")
	}
	ts.facade.Decide(DecideArgs{ProposalID: p2.ID, Approve: true})
	if env := <-second; env["status"] != "succeeded" {
		t.Fatalf("second call: %v", env)
	}
}

// A capture waiting for its grant keeps the client's timer alive too.
func TestMCPGrantWaitKeepAlive(t *testing.T) {
	work := t.TempDir()
	setCaptureEnv(t, work)
	t.Setenv("GATEHOUSE_PROCESS_CAPTURE_AUTO_GRANT", "0")
	ts := startServer(t)
	ts.mcp.limits.KeepAlive = 100 * time.Millisecond
	_, tok := addAgent(t, ts, "grant-waiter")
	var mu sync.Mutex
	n := 0
	cs, err := mcpClient(t, ts, tok, func(r *mcp.ProgressNotificationClientRequest) {
		if strings.HasPrefix(r.Params.Message, "waiting for the capture grant") {
			mu.Lock()
			n++
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "capture_process_scenario", Arguments: map[string]any{"approved": true, "executable": "/bin/echo",
		"arguments": []string{"ok"}, "working_directory": work, "timeout_ms": 5000}}
	params.SetProgressToken("g")
	done := make(chan *mcp.CallToolResult, 1)
	go func() { r, _ := cs.CallTool(context.Background(), params); done <- r }()
	var id string
	waitFor(t, "the grant", func() bool {
		p, _ := ts.facade.PendingGrants(Empty{})
		if len(p.Grants) == 1 {
			id = p.Grants[0].ID
		}
		return id != ""
	})
	waitFor(t, "five keep-alives", func() bool { mu.Lock(); defer mu.Unlock(); return n >= 5 })
	ts.facade.DecideGrant(DecideGrantArgs{GrantID: id, Approve: true, Scope: "once"})
	if r := <-done; r == nil || r.IsError {
		t.Fatalf("capture after the grant: %v", r)
	}
}

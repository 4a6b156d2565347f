package app

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/runner"
)

// Waiting for a person (docs/mcp.md "What real hosts need"). A run_skill
// execution is a ticket that can outlive the tool call that started it:
// the call waits for it while it can, sending a progress notification at
// least every KeepAlive (hosts reset their request timer on progress) and
// one for every lifecycle step of the run journal; a call without a
// progress token, or one that declared a budget (wait_ms), returns
// awaiting_decision with the ticket when the budget runs out, and
// await_run {ticket} resumes the same proposal and run. When no app
// window is open to decide, the agent is told at once. Cancelling a
// waiting call cancels the ticket (its proposal is recorded cancelled);
// the session's end cancels every ticket it left.

// defaultWaitBudget is how long a call without a progress token waits
// before it returns awaiting_decision: hosts without progress support
// time out at about 60 s (Codex, Claude Desktop).
const defaultWaitBudget = 25 * time.Second

// maxTicketsPerSession bounds the executions one session keeps.
const maxTicketsPerSession = consent.MaxProposalsPerRun

// ticket is one run_skill execution.
type ticket struct {
	id     string
	skill  string
	cancel context.CancelFunc
	done   chan struct{}
	res    runner.Result // set before done closes

	mu         sync.Mutex
	state      string // "starting", "awaiting_decision", "running"
	proposalID string
	expiresAt  time.Time
	sink       func(msg string) // the waiting call's progress notifier, or nil
	unsent     []string         // what was said while no call was waiting, sent when one attaches
}

func (k *ticket) set(f func(k *ticket)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	f(k)
}

// say sends msg to the waiting call, if it has a progress token.
func (k *ticket) say(msg string) {
	k.mu.Lock()
	sink := k.sink
	if sink == nil && len(k.unsent) < 16 {
		k.unsent = append(k.unsent, msg)
	}
	k.mu.Unlock()
	if sink != nil {
		sink(msg)
	}
}

// status is what a keep-alive says about the ticket now.
func (k *ticket) status(now time.Time) string {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch k.state {
	case "awaiting_decision":
		left := k.expiresAt.Sub(now).Round(time.Second)
		if left < 0 {
			left = 0
		}
		return fmt.Sprintf("waiting for approval in Gatehouse, expires in %d:%02d", int(left.Minutes()), int(left.Seconds())%60)
	case "running":
		return "running " + k.skill
	}
	return "preparing " + k.skill
}

// windowOpen reports whether someone can decide now: the desktop window,
// or a browser page following the app's events.
func (s *mcpService) windowOpen() bool {
	return s.f.shell == "desktop" || s.windows.Load() > 0
}

// windowTracker counts open app pages (serveEvents holds one each).
type windowTracker struct{ atomic.Int32 }

// open counts one page until the returned function is called.
func (w *windowTracker) open() func() {
	w.Add(1)
	var once sync.Once
	return func() { once.Do(func() { w.Add(-1) }) }
}

// startTicket starts executing creq for this session in the background.
func (t *mcpTools) startTicket(ss *mcp.ServerSession, creq *consent.Request) (*ticket, error) {
	t.mu.Lock()
	if len(t.tickets) >= maxTicketsPerSession {
		t.mu.Unlock()
		return nil, fmt.Errorf("this session already has %d runs waiting or unread; read them with await_run first", maxTicketsPerSession)
	}
	ctx, cancel := context.WithCancel(t.s.f.ctx)
	k := &ticket{id: rand.Text(), skill: creq.Skill, cancel: cancel, done: make(chan struct{}), state: "starting"}
	t.tickets[k.id] = k
	t.mu.Unlock()

	f := t.s.f
	untrack := t.s.track(ss.ID(), cancel) // the owner's DELETE cancels it
	creq.OnProgress = func(p runner.Progress) {
		msg := fmt.Sprintf("%s: %d", k.skill, p.Completed)
		if p.Total != nil {
			msg += fmt.Sprintf("/%d", *p.Total)
		}
		if p.Message != "" {
			msg += " " + p.Message
		}
		k.say(msg)
	}
	events, stop := f.journal.Subscribe(64)
	drained := make(chan struct{}) // every event delivered before stop is reported
	go func() {
		defer close(drained)
		for e := range events {
			if e.RunID != creq.RunID || e.Skill != creq.Skill {
				continue
			}
			k.lifecycle(e)
		}
	}()
	untrackRun := f.trackRun(creq.RunID, creq.Skill, t.agentID, cancel)
	go func() {
		defer close(k.done)
		defer cancel()
		defer untrack()
		defer untrackRun()
		defer stop()
		defer f.forgetRunLater(creq.RunID)
		k.res = f.pipeline.Execute(ctx, creq)
		// The journal delivers synchronously, so the run's last steps
		// ("exited", "cleaned") are already buffered: report them before the
		// result, or a client can receive the result first and drop them.
		stop()
		<-drained
	}()
	return k, nil
}

// lifecycle applies one journal event to the ticket and reports it.
func (k *ticket) lifecycle(e runner.Event) {
	switch e.Type {
	case runner.EventProposed:
		var d struct {
			ProposalID string    `json:"proposalId"`
			ExpiresAt  time.Time `json:"expiresAt"`
		}
		_ = json.Unmarshal(e.Detail, &d)
		k.set(func(k *ticket) { k.state, k.proposalID, k.expiresAt = "awaiting_decision", d.ProposalID, d.ExpiresAt })
		k.say("proposed: " + k.status(time.Now()))
	case runner.EventDecided:
		var d struct {
			State string `json:"state"`
		}
		_ = json.Unmarshal(e.Detail, &d)
		k.set(func(k *ticket) {
			if k.state == "awaiting_decision" {
				k.state = "running"
			}
		})
		k.say("decided: " + d.State)
	case runner.EventStaged, runner.EventSpawned, runner.EventExited, runner.EventCleaned:
		k.set(func(k *ticket) { k.state = "running" })
		k.say(e.Type)
	}
}

// waitTicket waits for k on behalf of one tool call. budget ≤ 0 means no
// budget. It returns the run's result, or the awaiting_decision/running
// result with the ticket, or a cancellation error.
func (t *mcpTools) waitTicket(ctx context.Context, req *mcp.CallToolRequest, k *ticket, budget time.Duration) (*mcp.CallToolResult, error) {
	ss := req.Session
	token := req.Params.GetProgressToken()
	if token != nil {
		var n atomic.Int64
		sink := func(msg string) {
			ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n.Add(1)), Message: msg})
		}
		var unsent []string
		k.set(func(k *ticket) { k.sink, unsent, k.unsent = sink, k.unsent, nil })
		for _, msg := range unsent { // said before this call attached (the run's "proposed")
			sink(msg)
		}
		defer k.set(func(k *ticket) { k.sink = nil })
	}
	if budget <= 0 && token == nil {
		budget = defaultWaitBudget
	}
	var timeout <-chan time.Time
	if budget > 0 {
		tm := time.NewTimer(budget)
		defer tm.Stop()
		timeout = tm.C
	}
	keep := time.NewTicker(t.s.limits.KeepAlive)
	defer keep.Stop()
	gone := make(chan struct{}) // the client vanished without saying so
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go watchSession(wctx, ss, func() { close(gone) })
	toldNoWindow := false
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-k.done:
			t.forget(k)
			return runResult(k.res), nil
		case <-ctx.Done():
			k.cancel()
			<-k.done
			t.forget(k)
			return nil, ctx.Err()
		case <-gone:
			k.cancel()
			<-k.done
			t.forget(k)
			return nil, context.Canceled
		case <-timeout:
			return t.pending(k, ""), nil
		case <-keep.C:
			k.say(k.status(time.Now()))
		case <-poll.C:
			if toldNoWindow || k.stateNow() != "awaiting_decision" || t.s.windowOpen() {
				continue
			}
			toldNoWindow = true
			const msg = "no Gatehouse window is open, so nobody can decide now; the request waits until the person opens Gatehouse"
			if token == nil {
				return t.pending(k, msg), nil
			}
			k.say(msg)
		}
	}
}

func (k *ticket) stateNow() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.state
}

// pending is the result of a call that stops waiting before the run
// ended: the ticket to resume with.
func (t *mcpTools) pending(k *ticket, note string) *mcp.CallToolResult {
	k.mu.Lock()
	state, prop, exp := k.state, k.proposalID, k.expiresAt
	k.mu.Unlock()
	if state == "starting" {
		state = "running"
	}
	out := map[string]any{"status": state, "ticket": k.id, "skill": k.skill,
		"next_step": "call await_run with this ticket to keep waiting for the same request; do not call run_skill again (a new call replaces this request)"}
	if state == "awaiting_decision" {
		out["proposal_id"] = prop
		out["expires_at"] = exp.UTC().Format(time.RFC3339)
		out["message"] = "the person has not decided yet"
	} else {
		out["message"] = "the run has not finished yet"
	}
	if note != "" {
		out["message"] = note
		out["window_open"] = false
	}
	return jsonResult(out, false)
}

// forget drops a finished ticket whose result was handed out.
func (t *mcpTools) forget(k *ticket) {
	t.mu.Lock()
	delete(t.tickets, k.id)
	t.mu.Unlock()
}

// cancelTickets ends every execution of the session (its end).
func (t *mcpTools) cancelTickets() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range t.tickets {
		k.cancel()
	}
}

// runResult is the tool result of a finished execution.
func runResult(res runner.Result) *mcp.CallToolResult {
	return jsonResult(res.Envelope, res.Envelope.Status != runner.StatusSucceeded)
}

func (t *mcpTools) awaitRun(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Ticket string `json:"ticket"`
		WaitMs int64  `json:"wait_ms"`
	}
	if err := decodeArgs(req.Params.Arguments, &a); err != nil || a.Ticket == "" || a.WaitMs < 0 {
		return toolError("invalid_arguments", "ticket (from an awaiting_decision result) is required; wait_ms must be ≥ 0"), nil
	}
	t.mu.Lock()
	k := t.tickets[a.Ticket]
	t.mu.Unlock()
	if k == nil {
		return toolError("unknown_ticket", "no waiting request with this ticket on this connection (tickets belong to the session that made them, and a result is handed out once)"), nil
	}
	return t.waitTicket(ctx, req, k, time.Duration(a.WaitMs)*time.Millisecond)
}

// keepAlive sends a progress notification with msg every KeepAlive while
// a call without a ticket (a grant or plan dialog) waits for a person,
// when the client gave a progress token; the returned function stops it.
func (t *mcpTools) keepAlive(ctx context.Context, ss *mcp.ServerSession, token any, msg string) func() {
	if token == nil {
		return func() {}
	}
	ctx, stop := context.WithCancel(ctx)
	go func() {
		tick := time.NewTicker(t.s.limits.KeepAlive)
		defer tick.Stop()
		n := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				n++
				ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg})
			}
		}
	}()
	return stop
}

type progressTokenKey struct{}

// withProgressToken is the middleware that makes a tools/call's progress
// token reachable from helpers that only get the call's context.
func withProgressToken(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
			if tok := r.Params.GetProgressToken(); tok != nil {
				ctx = context.WithValue(ctx, progressTokenKey{}, tok)
			}
		}
		return next(ctx, method, req)
	}
}

// progressToken is the progress token of the tools/call ctx belongs to.
func progressToken(ctx context.Context) any { return ctx.Value(progressTokenKey{}) }

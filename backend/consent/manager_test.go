package consent

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock moves wall and monotonic time independently.
type fakeClock = ManualClock

func setup(t *testing.T) (*Manager, *fakeClock, Binding) {
	clock := &fakeClock{wall: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	m := NewManager(clock)
	run := m.StartRun("agent-1")
	return m, clock, Binding{
		AgentID: "agent-1", RunID: run, Skill: "memory-organization",
		Workspace: Workspace{Path: "/w", Dev: 1, Ino: 2}, Revision: "sha256:aa", InvocationDigest: Digest([]byte(`{}`)),
		Runtime: Runtime{Path: "/usr/bin/node", Version: "v20", SHA256: "bb"}, TimeoutMs: 5000, MaxOutputBytes: 65536,
	}
}

func propose(t *testing.T, m *Manager, b Binding) Proposal {
	t.Helper()
	p, err := m.Propose(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// race runs try(0) … try(n-1) in n goroutines released together and
// returns how many of them returned nil.
func race(n int, try func(i int) error) int {
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if try(i) == nil {
				wins.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	return int(wins.Load())
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if Code(err) != code {
		t.Fatalf("err %v, want code %s", err, code)
	}
}

func state(m *Manager, id string) State { p, _ := m.Get(id); return p.State }

func TestApproveThenConsumeOnce(t *testing.T) {
	m, _, b := setup(t)
	p := propose(t, m, b)
	if p.State != Pending || !p.ExpiresAt.Equal(p.CreatedAt.Add(Window)) {
		t.Fatalf("%+v", p)
	}
	wantCode(t, m.Consume(p.ID, b), "not_approved")
	if _, err := m.Decide(p.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := m.Consume(p.ID, b); err != nil {
		t.Fatal(err)
	}
	wantCode(t, m.Consume(p.ID, b), "already_consumed")
	if state(m, p.ID) != Consumed {
		t.Fatal(state(m, p.ID))
	}
}

func TestDuplicateAndConflictingDecisions(t *testing.T) {
	m, _, b := setup(t)
	p := propose(t, m, b)
	m.Decide(p.ID, true)
	_, err := m.Decide(p.ID, true)
	wantCode(t, err, "already_decided") // double approve
	_, err = m.Decide(p.ID, false)
	wantCode(t, err, "already_decided")
	if state(m, p.ID) != Approved {
		t.Fatal("a second decision changed the state")
	}

	b.Skill = "other"
	q := propose(t, m, b)
	m.Decide(q.ID, false)
	_, err = m.Decide(q.ID, true) // approve after deny
	wantCode(t, err, "already_decided")
	wantCode(t, m.Consume(q.ID, b), "denied")
	_, err = m.Decide("nope", true)
	wantCode(t, err, CodeUnknownRequest)
}

func TestHundredConsumersExactlyOneWins(t *testing.T) {
	m, _, b := setup(t)
	p := propose(t, m, b)
	m.Decide(p.ID, true)
	if wins := race(100, func(int) error { return m.Consume(p.ID, b) }); wins != 1 {
		t.Fatalf("%d consumers won", wins)
	}
}

func TestExpiryIsMonotonic(t *testing.T) {
	m, clock, b := setup(t)
	p := propose(t, m, b)
	clock.Advance(Window-time.Millisecond, -time.Hour) // wall clock moved back an hour
	if state(m, p.ID) != Pending {
		t.Fatal("expired early")
	}
	m.Decide(p.ID, true)
	clock.Advance(time.Millisecond, -24*time.Hour) // exactly 5:00 on the monotonic clock
	if state(m, p.ID) != Expired {
		t.Fatalf("state at 5:00 is %s", state(m, p.ID))
	}
	wantCode(t, m.Consume(p.ID, b), "expired")

	q := propose(t, m, b)
	clock.Advance(0, 48*time.Hour) // a wall clock jump forward does not expire it either
	if state(m, q.ID) != Pending {
		t.Fatal("wall clock expired a proposal")
	}
	clock.Advance(Window, 0)
	_, err := m.Decide(q.ID, true)
	wantCode(t, err, "expired")
}

func TestSixtyFifthProposalIsRejected(t *testing.T) {
	m, _, b := setup(t)
	for i := 0; i < MaxProposalsPerRun; i++ {
		b.Skill = string(rune('a' + i%26))
		p := propose(t, m, b)
		m.Decide(p.ID, false) // decided, so the per-agent pending bound stays clear
	}
	_, err := m.Propose(b)
	wantCode(t, err, "too_many_proposals")
}

// TestProposalFloodIsBoundedPerAgent is the attacker's side of the flood:
// one agent opening many runs cannot keep more than MaxPendingPerAgent
// requests waiting for the person; other agents are not affected, and a
// decision or an expiry makes room again.
func TestProposalFloodIsBoundedPerAgent(t *testing.T) {
	m, clock, b := setup(t)
	var first Proposal
	for i := 0; i < MaxPendingPerAgent; i++ {
		b.RunID = m.StartRun("agent-1") // a fresh run each time: the per-run bound never bites
		p := propose(t, m, b)
		if i == 0 {
			first = p
		}
	}
	b.RunID = m.StartRun("agent-1")
	_, err := m.Propose(b)
	wantCode(t, err, "too_many_pending")
	if n := len(m.Pending()); n != MaxPendingPerAgent {
		t.Fatalf("%d pending, want %d", n, MaxPendingPerAgent)
	}
	other := b
	other.AgentID, other.RunID = "agent-2", m.StartRun("agent-2")
	propose(t, m, other)
	m.Decide(first.ID, false)
	propose(t, m, b) // the decided one made room
	_, err = m.Propose(b)
	wantCode(t, err, "too_many_pending")
	clock.Advance(Window, 0) // every pending request expires
	b.RunID = m.StartRun("agent-1")
	propose(t, m, b)
}

func TestReplacementStalesPredecessors(t *testing.T) {
	m, _, b := setup(t)
	approved := propose(t, m, b)
	m.Decide(approved.ID, true)
	pending := propose(t, m, b) // stales the approved-but-unconsumed grant
	if state(m, approved.ID) != Stale {
		t.Fatalf("approved predecessor is %s", state(m, approved.ID))
	}
	wantCode(t, m.Consume(approved.ID, b), "stale")
	other := b
	other.Skill = "text-metrics"
	propose(t, m, other) // another skill leaves it alone
	if state(m, pending.ID) != Pending {
		t.Fatal("a proposal for another skill staled this one")
	}
}

func TestBindingChangedBetweenApprovalAndLaunch(t *testing.T) {
	for name, change := range map[string]func(*Binding){
		"workspace replaced": func(b *Binding) { b.Workspace.Ino = 99 },
		"workspace moved":    func(b *Binding) { b.Workspace.Path = "/elsewhere" },
		"revision changed":   func(b *Binding) { b.Revision = "sha256:cc" },
		"runtime changed":    func(b *Binding) { b.Runtime.SHA256 = "dd" },
		"invocation changed": func(b *Binding) { b.InvocationDigest = Digest([]byte(`{"x":1}`)) },
		"limits raised":      func(b *Binding) { b.TimeoutMs = 6000 },
		"other agent":        func(b *Binding) { b.AgentID = "agent-2" },
	} {
		t.Run(name, func(t *testing.T) {
			m, _, b := setup(t)
			p := propose(t, m, b)
			m.Decide(p.ID, true)
			changed := b
			change(&changed)
			wantCode(t, m.Consume(p.ID, changed), "binding_changed")
			wantCode(t, m.Consume(p.ID, b), "binding_changed") // void for good
		})
	}
}

func TestEndRunCancelsOutstanding(t *testing.T) {
	m, _, b := setup(t)
	pending := propose(t, m, b)
	b2 := b
	b2.Skill = "x"
	approved := propose(t, m, b2)
	m.Decide(approved.ID, true)
	events, stop := m.Subscribe(16)
	defer stop()
	if err := m.EndRun(b.RunID); err != nil {
		t.Fatal(err)
	}
	cancelled := 0
	for len(events) > 0 {
		if e := <-events; e.Type == string(Cancelled) {
			cancelled++
		}
	}
	if cancelled != 2 {
		t.Fatalf("%d cancellations", cancelled)
	}
	wantCode(t, m.Consume(approved.ID, b2), "unknown_proposal")
	_, err := m.Propose(b)
	wantCode(t, err, "unknown_run")
	_ = pending
}

func TestWaitWakesOnDecisionAndRefusals(t *testing.T) {
	m, _, b := setup(t)
	p := propose(t, m, b)
	go m.Decide(p.ID, false)
	got, err := m.Wait(context.Background(), p.ID)
	if err != nil || got.State != Denied {
		t.Fatalf("%+v %v", got, err)
	}
	q := propose(t, m, b)
	m.RefuseByPolicy(q.ID)
	if state(m, q.ID) != PolicyRefused {
		t.Fatal(state(m, q.ID))
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := propose(t, m, b)
	cancel()
	if _, err := m.Wait(ctx, r.ID); err == nil {
		t.Fatal("wait ignored cancellation")
	}
}

func TestProposeChecksRunAndAgent(t *testing.T) {
	m, _, b := setup(t)
	other := b
	other.AgentID = "agent-2"
	_, err := m.Propose(other)
	wantCode(t, err, "wrong_agent")
	other = b
	other.RunID = "made-up"
	_, err = m.Propose(other)
	wantCode(t, err, "unknown_run")
}

func TestNothingSurvivesANewManager(t *testing.T) {
	m, _, b := setup(t)
	p := propose(t, m, b)
	m.Decide(p.ID, true)
	fresh := NewManager(SystemClock())
	wantCode(t, fresh.Consume(p.ID, b), "unknown_proposal")
}

func TestWorkflowPlans(t *testing.T) {
	m, _, b := setup(t)
	_, err := m.ConsumeStep(b)
	wantCode(t, err, "workflow_authorization_missing")
	steps := make([]Step, MaxPlanSteps+1)
	for i := range steps {
		steps[i] = Step{Skill: b.Skill, Revision: b.Revision, InvocationDigest: Digest([]byte{byte(i)}), Workspace: b.Workspace}
	}
	_, err = m.ProposePlan(b.RunID, b.AgentID, steps)
	wantCode(t, err, "invalid_plan")
	_, err = m.ProposePlan(b.RunID, b.AgentID, nil)
	wantCode(t, err, "invalid_plan")
	steps = steps[:MaxPlanSteps]
	steps[0].InvocationDigest = b.InvocationDigest
	plan, err := m.ProposePlan(b.RunID, b.AgentID, steps)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.ConsumeStep(b)
	wantCode(t, err, "workflow_authorization_missing") // not approved yet
	if _, err := m.DecidePlan(plan.ID, true); err != nil {
		t.Fatal(err)
	}
	_, err = m.DecidePlan(plan.ID, true)
	wantCode(t, err, "already_decided")
	if i, err := m.ConsumeStep(b); err != nil || i != 0 {
		t.Fatalf("step %d %v", i, err)
	}
	_, err = m.ConsumeStep(b) // each step once
	wantCode(t, err, "off_plan")
	off := b
	off.InvocationDigest = Digest([]byte("not planned"))
	_, err = m.ConsumeStep(off)
	wantCode(t, err, "off_plan")
	other := m.StartRun(b.AgentID) // plans belong to their run only
	b2 := b
	b2.RunID = other
	b2.InvocationDigest = steps[1].InvocationDigest
	_, err = m.ConsumeStep(b2)
	wantCode(t, err, "workflow_authorization_missing")
	m.EndRun(b.RunID)
	_, err = m.ConsumeStep(b)
	wantCode(t, err, "unknown_run")
}

package consent

import (
	"context"
	"slices"
	"testing"
	"time"
)

// requestKind drives one kind of request (proposal, plan, grant) through
// the operations every kind shares, so one table covers them all.
type requestKind struct {
	name     string
	raise    func(m *Manager, b Binding) (string, error)
	decide   func(m *Manager, id string, approve bool) error
	state    func(m *Manager, id string) State
	withdraw func(m *Manager, id string)
	wait     func(ctx context.Context, m *Manager, id string) (State, error)
	use      func(m *Manager, id string, b Binding) error // spends approved request id
}

// mustRaise raises a request of kind k for b; a refusal ends the test.
func (k requestKind) mustRaise(t *testing.T, m *Manager, b Binding) string {
	t.Helper()
	id, err := k.raise(m, b)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func requestKinds() []requestKind {
	step := func(b Binding) []Step {
		return []Step{{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}}
	}
	return []requestKind{{
		name:     "proposal",
		raise:    func(m *Manager, b Binding) (string, error) { p, err := m.Propose(b); return p.ID, err },
		decide:   func(m *Manager, id string, ok bool) error { _, err := m.Decide(id, ok); return err },
		state:    func(m *Manager, id string) State { p, _ := m.Get(id); return p.State },
		withdraw: func(m *Manager, id string) { m.Cancel(id) },
		wait: func(ctx context.Context, m *Manager, id string) (State, error) {
			p, err := m.Wait(ctx, id)
			return p.State, err
		},
		use: func(m *Manager, id string, b Binding) error { return m.Consume(id, b) },
	}, {
		name: "plan",
		raise: func(m *Manager, b Binding) (string, error) {
			p, err := m.ProposePlan(b.RunID, b.AgentID, step(b))
			return p.ID, err
		},
		decide:   func(m *Manager, id string, ok bool) error { _, err := m.DecidePlan(id, ok); return err },
		state:    func(m *Manager, id string) State { p, _ := m.GetPlan(id); return p.State },
		withdraw: func(m *Manager, id string) { m.WithdrawPlan(id) },
		wait: func(ctx context.Context, m *Manager, id string) (State, error) {
			p, err := m.WaitPlan(ctx, id)
			return p.State, err
		},
		use: func(m *Manager, _ string, b Binding) error { _, err := m.ConsumeStep(b); return err },
	}, {
		name: "grant",
		raise: func(m *Manager, b Binding) (string, error) {
			g, err := m.RequestGrant(b.RunID, b.AgentID, grantReq())
			return g.ID, err
		},
		decide:   func(m *Manager, id string, ok bool) error { _, err := m.DecideGrant(id, ok, ScopeOnce); return err },
		state:    func(m *Manager, id string) State { g, _ := m.GetGrant(id); return g.State },
		withdraw: func(m *Manager, id string) { m.WithdrawGrant(id) },
		wait: func(ctx context.Context, m *Manager, id string) (State, error) {
			g, err := m.WaitGrant(ctx, id)
			return g.State, err
		},
		use: func(m *Manager, _ string, b Binding) error {
			_, err := m.UseGrant(b.RunID, b.AgentID, grantReq())
			return err
		},
	}}
}

// TestDecisionErrorsAreOneRuleForEveryKind: deciding a request that is
// not pending fails with one code per situation, whatever the kind, and
// changes nothing. Before the one lifecycle the kinds disagreed (a
// replaced plan was unknown_plan but a replaced proposal stale; a
// cancelled approved proposal was cancelled, not already_decided; an
// unknown id was unknown_proposal, unknown_plan or unknown_grant).
func TestDecisionErrorsAreOneRuleForEveryKind(t *testing.T) {
	type situation struct {
		name  string
		kinds []string // nil: every kind
		make  func(t *testing.T, k requestKind, m *Manager, c *ManualClock, b Binding) string
		want  string
	}
	decide := func(t *testing.T, k requestKind, m *Manager, id string, ok bool) {
		t.Helper()
		if err := k.decide(m, id, ok); err != nil {
			t.Fatal(err)
		}
	}
	situations := []situation{
		{name: "never raised", want: CodeUnknownRequest,
			make: func(*testing.T, requestKind, *Manager, *ManualClock, Binding) string { return "no-such-request" }},
		{name: "run ended", want: CodeUnknownRequest,
			make: func(t *testing.T, k requestKind, m *Manager, _ *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				m.EndRun(b.RunID)
				return id
			}},
		{name: "window passed", want: CodeExpired,
			make: func(t *testing.T, k requestKind, m *Manager, c *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				c.Advance(Window, 0)
				return id
			}},
		{name: "approved", want: CodeAlreadyDecided,
			make: func(t *testing.T, k requestKind, m *Manager, _ *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				decide(t, k, m, id, true)
				return id
			}},
		{name: "denied", want: CodeAlreadyDecided,
			make: func(t *testing.T, k requestKind, m *Manager, _ *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				decide(t, k, m, id, false)
				return id
			}},
		{name: "approved then used", want: CodeAlreadyDecided,
			make: func(t *testing.T, k requestKind, m *Manager, _ *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				decide(t, k, m, id, true)
				if err := k.use(m, id, b); err != nil {
					t.Fatal(err)
				}
				return id
			}},
		{name: "approved then its window passed", want: CodeAlreadyDecided,
			make: func(t *testing.T, k requestKind, m *Manager, c *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				decide(t, k, m, id, true)
				c.Advance(Window, 0)
				return id
			}},
		{name: "approved then replaced", kinds: []string{"proposal", "plan"}, want: CodeAlreadyDecided,
			make: func(t *testing.T, k requestKind, m *Manager, _ *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				decide(t, k, m, id, true)
				k.mustRaise(t, m, b)
				return id
			}},
		{name: "approved then cancelled", kinds: []string{"proposal"}, want: CodeAlreadyDecided,
			make: func(t *testing.T, k requestKind, m *Manager, _ *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				decide(t, k, m, id, true)
				m.Cancel(id)
				return id
			}},
		{name: "withdrawn", want: CodeWithdrawn,
			make: func(t *testing.T, k requestKind, m *Manager, _ *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				k.withdraw(m, id)
				return id
			}},
		{name: "replaced undecided", kinds: []string{"proposal", "plan"}, want: CodeWithdrawn,
			make: func(t *testing.T, k requestKind, m *Manager, _ *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				k.mustRaise(t, m, b)
				return id
			}},
		{name: "refused by policy undecided", kinds: []string{"proposal"}, want: CodeWithdrawn,
			make: func(t *testing.T, k requestKind, m *Manager, _ *ManualClock, b Binding) string {
				id := k.mustRaise(t, m, b)
				m.RefuseByPolicy(id)
				return id
			}},
	}
	for _, k := range requestKinds() {
		for _, s := range situations {
			if s.kinds != nil && !contains(s.kinds, k.name) {
				continue
			}
			t.Run(k.name+"/"+s.name, func(t *testing.T) {
				m, clock, b := setup(t)
				id := s.make(t, k, m, clock, b)
				before := k.state(m, id)
				for _, approve := range []bool{true, false} {
					err := k.decide(m, id, approve)
					wantCode(t, err, s.want)
					if after := k.state(m, id); after != before {
						t.Fatalf("a refused decision moved the %s from %s to %s", k.name, before, after)
					}
				}
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestWaitEndsOnTheClocksSignal: a wait for a request nobody decides ends
// in the Advance that closes its window, for every kind, with no real
// time passing on the consent clock and no polling: the waiter arms one
// timer on the clock, an Advance short of the window leaves it waiting,
// and a cancelled wait releases its timer. (Before the clock could
// signal, waitUntil re-read the clock every 250 ms and armed nothing.)
func TestWaitEndsOnTheClocksSignal(t *testing.T) {
	for _, k := range requestKinds() {
		t.Run(k.name, func(t *testing.T) {
			m, clock, b := setup(t)
			id := k.mustRaise(t, m, b)
			type result struct {
				s   State
				err error
			}
			done := make(chan result, 1)
			go func() { s, err := k.wait(context.Background(), m, id); done <- result{s, err} }()
			awaitTimers(t, clock, 1)
			clock.Advance(Window-time.Nanosecond, 0)
			if n := clock.Timers(); n != 1 {
				t.Fatalf("%d timers armed before the window closed, want the waiter's one", n)
			}
			select {
			case r := <-done:
				t.Fatalf("the wait ended before the window closed: %+v", r)
			default:
			}
			clock.Advance(time.Nanosecond, 0)
			select {
			case r := <-done:
				if r.err != nil || r.s != Expired {
					t.Fatalf("wait ended with %s %v, want expired", r.s, r.err)
				}
			case <-time.After(10 * time.Second): // a safety net for a broken wait, not a bound
				t.Fatal("the wait did not end when the window closed")
			}
			if n := clock.Timers(); n != 0 {
				t.Fatalf("%d timers left armed after the wait", n)
			}

			// A wait cancelled by its caller releases its timer.
			id2 := k.mustRaise(t, m, b)
			ctx, cancel := context.WithCancel(context.Background())
			go func() { s, err := k.wait(ctx, m, id2); done <- result{s, err} }()
			awaitTimers(t, clock, 1)
			cancel()
			if r := <-done; r.err == nil {
				t.Fatalf("a cancelled wait returned %s without an error", r.s)
			}
			if n := clock.Timers(); n != 0 {
				t.Fatalf("a cancelled wait left %d timers armed", n)
			}
		})
	}
}

// awaitTimers waits until n timers are armed on clock: the waiting
// goroutine may not have run yet on a loaded machine.
func awaitTimers(t *testing.T, clock *ManualClock, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); clock.Timers() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d timers armed, want %d: the waiter never armed the clock", clock.Timers(), n)
		}
	}
}

// TestScaledClockNeverFiresEarly: a scaled clock's timer closes only once
// the scaled reading has reached its deadline, so a woken waiter finds
// the window really closed.
func TestScaledClockNeverFiresEarly(t *testing.T) {
	c := ScaledClock(SystemClock(), 1000)
	for range 20 {
		at := c.Mono() + 3*time.Millisecond // 3 µs of real time
		fired, stop := c.AfterMono(at)
		<-fired
		stop()
		if now := c.Mono(); now < at {
			t.Fatalf("fired at %s, before %s", now, at)
		}
	}
}

// TestPlanBound: replaced plans are kept until the run ends (so deciding
// one says it was withdrawn), which bounds them per run like proposals
// and grants.
func TestPlanBound(t *testing.T) {
	m, _, b := setup(t)
	step := []Step{{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}}
	for i := range MaxPlansPerRun {
		if _, err := m.ProposePlan(b.RunID, b.AgentID, step); err != nil {
			t.Fatalf("plan %d: %v", i, err)
		}
	}
	_, err := m.ProposePlan(b.RunID, b.AgentID, step)
	wantCode(t, err, "too_many_plans")
	if n := len(m.PendingPlans()); n != 1 {
		t.Fatalf("%d plans pending, want the newest one", n)
	}
}

// TestPendingIsOldestFirstWhateverTheWallClock: the pending lists are in
// the order the requests were raised, even when the wall clock moves back
// between them (sorting by the displayed creation time put a request
// raised after a clock step ahead of older ones).
func TestPendingIsOldestFirstWhateverTheWallClock(t *testing.T) {
	m, clock, b := setup(t)
	step := []Step{{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}}
	var props, plans, grants []string
	for i := range 3 {
		b.RunID = m.StartRun(b.AgentID)
		p, err := m.Propose(b)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := m.ProposePlan(b.RunID, b.AgentID, step)
		if err != nil {
			t.Fatal(err)
		}
		g, err := m.RequestGrant(b.RunID, b.AgentID, grantReq())
		if err != nil {
			t.Fatal(err)
		}
		props, plans, grants = append(props, p.ID), append(plans, pl.ID), append(grants, g.ID)
		clock.Advance(time.Second, -time.Duration(i+1)*time.Hour)
	}
	ids := func(n int, id func(int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = id(i)
		}
		return out
	}
	pp, pl, pg := m.Pending(), m.PendingPlans(), m.PendingGrants()
	for name, got := range map[string][]string{
		"proposals": ids(len(pp), func(i int) string { return pp[i].ID }),
		"plans":     ids(len(pl), func(i int) string { return pl[i].ID }),
		"grants":    ids(len(pg), func(i int) string { return pg[i].ID }),
	} {
		want := map[string][]string{"proposals": props, "plans": plans, "grants": grants}[name]
		if !slices.Equal(got, want) {
			t.Errorf("pending %s %v, want the raise order %v", name, got, want)
		}
	}
}

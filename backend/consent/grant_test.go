package consent

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

// waitersNow counts the goroutines blocked in waitUntil, that is inside
// WaitGrant or WaitPlan past their lookup of the grant or plan.
func waitersNow() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "backend/consent.waitUntil(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// awaitWaiter waits until a waiter more than before is blocked: a fixed
// sleep is not enough on a loaded machine, where the waiting goroutine
// may not have run yet when the test goes on.
func awaitWaiter(t *testing.T, before int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); waitersNow() <= before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the waiter never started waiting")
		}
	}
}

func grantReq() GrantRequest {
	return GrantRequest{Executable: "/bin/sh", WorkingDir: "/work/a", EnvNames: []string{"LANG"}, FilesystemRoots: []string{"/work/a"}}
}

func TestGrantCovers(t *testing.T) {
	g := GrantRequest{Executable: "/bin/sh", WorkingDir: "/work/a", EnvNames: []string{"LANG", "TZ"}, FilesystemRoots: []string{"/work/a"}}
	ok := []GrantRequest{
		{Executable: "/bin/sh", WorkingDir: "/work/a"},
		{Executable: "/bin//sh", WorkingDir: "/work/a/", EnvNames: []string{"TZ"}, FilesystemRoots: []string{"/work/a/sub"}},
	}
	bad := map[string]GrantRequest{
		"other executable": {Executable: "/bin/bash", WorkingDir: "/work/a"},
		"other directory":  {Executable: "/bin/sh", WorkingDir: "/work/b"},
		"extra env":        {Executable: "/bin/sh", WorkingDir: "/work/a", EnvNames: []string{"HOME"}},
		"root outside":     {Executable: "/bin/sh", WorkingDir: "/work/a", FilesystemRoots: []string{"/work/ab"}},
		"network":          {Executable: "/bin/sh", WorkingDir: "/work/a", ExternalNetwork: true},
	}
	for _, r := range ok {
		if !g.Covers(r) {
			t.Errorf("should cover %+v", r)
		}
	}
	for name, r := range bad {
		if g.Covers(r) {
			t.Errorf("%s: should not cover %+v", name, r)
		}
	}
}

func TestGrantOnceIsSpentOnceUnderConcurrency(t *testing.T) {
	m, _, b := setup(t)
	_, err := m.UseGrant(b.RunID, b.AgentID, grantReq())
	wantCode(t, err, "grant_required")
	g, err := m.RequestGrant(b.RunID, b.AgentID, grantReq())
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.UseGrant(b.RunID, b.AgentID, grantReq())
	wantCode(t, err, "grant_required") // pending is not approved
	_, err = m.DecideGrant(g.ID, true, "forever")
	wantCode(t, err, "invalid_scope")
	if got, _ := m.GetGrant(g.ID); got.State != Pending {
		t.Fatalf("a refused decision changed the grant: %+v", got)
	}
	if _, err := m.DecideGrant(g.ID, true, ScopeOnce); err != nil {
		t.Fatal(err)
	}
	_, err = m.DecideGrant(g.ID, false, "")
	wantCode(t, err, "already_decided")
	wins := race(100, func(int) error {
		_, err := m.UseGrant(b.RunID, b.AgentID, grantReq())
		return err
	})
	if wins != 1 {
		t.Fatalf("%d captures spent one once-grant", wins)
	}
	if got, _ := m.GetGrant(g.ID); got.State != Consumed || got.Uses != 1 {
		t.Fatalf("after use: %+v", got)
	}
}

func TestGrantSessionStaysWithItsConnection(t *testing.T) {
	m, _, b := setup(t)
	other := m.StartRun(b.AgentID) // a second connection of the same agent
	g, _ := m.RequestGrant(b.RunID, b.AgentID, grantReq())
	if _, err := m.DecideGrant(g.ID, true, ScopeSession); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if got, err := m.UseGrant(b.RunID, b.AgentID, grantReq()); err != nil || got.Uses != i+1 || got.State != Approved {
			t.Fatalf("use %d: %+v %v", i, got, err)
		}
	}
	wider := grantReq()
	wider.EnvNames = append(wider.EnvNames, "SECRET")
	_, err := m.UseGrant(b.RunID, b.AgentID, wider)
	wantCode(t, err, "grant_required")
	_, err = m.UseGrant(other, b.AgentID, grantReq())
	wantCode(t, err, "grant_required") // invisible to another connection
	_, err = m.UseGrant(b.RunID, "someone-else", grantReq())
	wantCode(t, err, "wrong_agent")
	_, err = m.RequestGrant(b.RunID, "someone-else", grantReq())
	wantCode(t, err, "wrong_agent")
	m.EndRun(b.RunID) // disconnect drops the grant
	if _, ok := m.GetGrant(g.ID); ok {
		t.Fatal("grant outlived its connection")
	}
	_, err = m.UseGrant(b.RunID, b.AgentID, grantReq())
	wantCode(t, err, "unknown_run")
}

func TestGrantExpiresAndWaitersWake(t *testing.T) {
	m, clock, b := setup(t)
	g, _ := m.RequestGrant(b.RunID, b.AgentID, grantReq())
	// The window is monotonic: moving the wall clock never ends or extends it.
	clock.Advance(Window-time.Second, -time.Hour)
	if got, _ := m.GetGrant(g.ID); got.State != Pending {
		t.Fatalf("expired early: %s", got.State)
	}
	done := make(chan Grant, 1)
	go func() { got, _ := m.WaitGrant(context.Background(), g.ID); done <- got }()
	clock.Advance(time.Second, 0)
	select {
	case got := <-done:
		if got.State != Expired {
			t.Fatalf("state %s", got.State)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not wake on expiry")
	}
	_, err := m.DecideGrant(g.ID, true, ScopeOnce)
	wantCode(t, err, "expired")
	if len(m.PendingGrants()) != 0 {
		t.Fatal("expired grant still pending")
	}
	// Cancellation at run end wakes a waiter too.
	g2, _ := m.RequestGrant(b.RunID, b.AgentID, grantReq())
	waiting := waitersNow()
	go func() { got, _ := m.WaitGrant(context.Background(), g2.ID); done <- got }()
	awaitWaiter(t, waiting) // EndRun forgets the grant: a later WaitGrant finds none
	m.EndRun(b.RunID)
	if got := <-done; got.State != Cancelled {
		t.Fatalf("after EndRun: %s", got.State)
	}
}

func TestGrantBound(t *testing.T) {
	m, _, b := setup(t)
	for i := range MaxGrantsPerRun {
		if _, err := m.RequestGrant(b.RunID, b.AgentID, grantReq()); err != nil {
			t.Fatalf("grant %d: %v", i, err)
		}
	}
	_, err := m.RequestGrant(b.RunID, b.AgentID, grantReq())
	wantCode(t, err, "too_many_grants")
}

func TestPlanLifecycle(t *testing.T) {
	m, clock, b := setup(t)
	step := []Step{{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}}
	events, stop := m.Subscribe(16)
	defer stop()
	p1, _ := m.ProposePlan(b.RunID, b.AgentID, step)
	if e := <-events; e.Kind != KindPlan || e.Type != "raised" || e.Plan.ID != p1.ID {
		t.Fatalf("raised event %+v", e)
	}
	if got := m.PendingPlans(); len(got) != 1 || got[0].ID != p1.ID {
		t.Fatalf("pending %+v", got)
	}
	_, err := m.ProposePlan(b.RunID, "someone-else", step)
	wantCode(t, err, "wrong_agent")
	p2, _ := m.ProposePlan(b.RunID, b.AgentID, step) // replaces p1
	_, err = m.DecidePlan(p1.ID, true)
	wantCode(t, err, CodeWithdrawn)                // replaced undecided
	clock.Advance(Window-time.Second, 2*time.Hour) // wall time is display only
	if got, _ := m.GetPlan(p2.ID); got.State != PlanPending {
		t.Fatalf("plan expired early: %s", got.State)
	}
	done := make(chan Plan, 1)
	go func() { got, _ := m.WaitPlan(context.Background(), p2.ID); done <- got }()
	clock.Advance(time.Second, 0)
	if got := <-done; got.State != PlanExpired {
		t.Fatalf("state %s", got.State)
	}
	_, err = m.DecidePlan(p2.ID, true)
	wantCode(t, err, "expired")
	_, err = m.ConsumeStep(b)
	wantCode(t, err, "workflow_authorization_missing")
	p3, _ := m.ProposePlan(b.RunID, b.AgentID, step)
	waiting := waitersNow()
	go func() { got, _ := m.WaitPlan(context.Background(), p3.ID); done <- got }()
	awaitWaiter(t, waiting) // EndRun forgets the plan: a later WaitPlan finds none
	m.EndRun(b.RunID)
	if got := <-done; got.State != PlanCancelled {
		t.Fatalf("after EndRun: %s", got.State)
	}
	if len(m.PendingPlans()) != 0 {
		t.Fatal("a cancelled plan is still pending")
	}
}

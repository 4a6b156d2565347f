package app

import (
	"errors"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/consent"
)

// TestPendingViewsOneLifecycle: the one view store behind the proposal,
// plan and grant dialogs publishes raised and later events with the kind's
// name, drops events about requests it never raised, hands out copies,
// and forgets exactly the views of the run that ended.
func TestPendingViewsOneLifecycle(t *testing.T) {
	h := newHub()
	events, stop := h.subscribe(16)
	defer stop()
	views := newPendingViews("grant", h, func(v *GrantView) string { return v.RunID }, func(v *GrantView, s consent.State) { v.State = string(s) })
	views.raise("g1", GrantView{ID: "g1", RunID: "run-a", State: "pending"})
	views.raise("g2", GrantView{ID: "g2", RunID: "run-b", State: "pending"})
	for _, id := range []string{"g1", "g2"} {
		e := <-events
		m, _ := e.Data.(map[string]any)
		if v, _ := m["grant"].(GrantView); e.Name != "grant" || m["type"] != "raised" || v.ID != id {
			t.Fatalf("raised event %+v", e)
		}
	}

	views.note("approved", "g1", func(v *GrantView) { v.State, v.Scope = "approved", "once" })
	e := <-events
	m, _ := e.Data.(map[string]any)
	if v, _ := m["grant"].(GrantView); m["type"] != "approved" || v.State != "approved" || v.Scope != "once" {
		t.Fatalf("noted event %+v", e)
	}
	views.note("approved", "never-raised", func(v *GrantView) { t.Fatal("updated a view nobody raised") })
	if len(events) != 0 {
		t.Fatalf("an event about an unknown request was published: %+v", <-events)
	}

	got, ok := views.update("g1", nil)
	got.State = "changed by the caller"
	if again, _ := views.update("g1", nil); !ok || again.State != "approved" {
		t.Fatalf("the stored view is %+v: a copy handed out changed it", again)
	}

	views.forgetRun("run-a")
	if _, ok := views.update("g1", nil); ok {
		t.Fatal("the ended run's view is still stored")
	}
	if _, ok := views.update("g2", nil); !ok {
		t.Fatal("another run's view was forgotten")
	}
}

// TestPendingViewsDecided: a decision's outcome updates the view the same
// way for every kind; a refused decision keeps the view's state when
// consent no longer knows the request (its run ended a moment ago) instead
// of blanking it, and comes back as the facade error with consent's code.
func TestPendingViewsDecided(t *testing.T) {
	views := newPendingViews("plan", newHub(), func(v *PlanView) string { return v.RunID }, func(v *PlanView, s consent.State) { v.State = string(s) })
	views.raise("p1", PlanView{ID: "p1", RunID: "r", State: "pending"})
	m := consent.NewManager(consent.NewManualClock(time.Now()))
	_, refused := m.DecidePlan("p1", true) // consent never heard of it
	v, err := views.decided("p1", "", refused, func(v *PlanView) { t.Fatal("a refused decision applied its extras") })
	var ce *CLIError
	if !errors.As(err, &ce) || ce.Code != consent.CodeUnknownRequest || v.State != "pending" || ce.Details != nil {
		t.Fatalf("refused: view %+v, error %+v", v, err)
	}
	v, err = views.decided("p1", consent.Approved, nil, func(v *PlanView) { v.Warning = "applied" })
	if err != nil || v.State != "approved" || v.Warning != "applied" {
		t.Fatalf("recorded: view %+v, error %v", v, err)
	}
	// A refusal about a request consent knows says what became of it.
	clock := consent.NewManualClock(time.Now())
	m = consent.NewManager(clock)
	run := m.StartRun("agent")
	p, _ := m.ProposePlan(run, "agent", []consent.Step{{Skill: "s"}})
	views.raise(p.ID, PlanView{ID: p.ID, RunID: run, State: "pending"})
	clock.Advance(consent.Window, 0)
	got, refused := m.DecidePlan(p.ID, true)
	v, err = views.decided(p.ID, got.State, refused, nil)
	details, _ := err.(*CLIError).Details.(map[string]string)
	if consent.Code(refused) != consent.CodeExpired || v.State != "expired" || details["state"] != "expired" {
		t.Fatalf("expired: view %+v, error %+v", v, err)
	}
}

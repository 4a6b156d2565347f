package consent

import (
	"sync"
	"sync/atomic"
	"testing"
)

// Many people (or a person and a replayed click) deciding the same
// request at once: exactly one decision counts, for every kind, and the
// request's state is that decision's.
func TestConcurrentDecisionsExactlyOneCounts(t *testing.T) {
	for _, k := range requestKinds() {
		t.Run(k.name, func(t *testing.T) {
			m, _, b := setup(t)
			id := k.mustRaise(t, m, b)
			var approved atomic.Bool // what the one counted decision asked for
			wins := race(64, func(i int) error {
				err := k.decide(m, id, i%2 == 0)
				if err == nil {
					approved.Store(i%2 == 0)
				} else if Code(err) != CodeAlreadyDecided {
					t.Errorf("a losing decision: %v, want %s", err, CodeAlreadyDecided)
				}
				return err
			})
			if wins != 1 {
				t.Fatalf("%d decisions of one %s counted", wins, k.name)
			}
			want := Denied
			if approved.Load() {
				want = Approved
			}
			if now := k.state(m, id); now != want {
				t.Fatalf("the %s is %s, the winning decision made it %s", k.name, now, want)
			}
		})
	}
}

// Many launches taking the same step of an approved plan at once: the
// step runs exactly once.
func TestConcurrentStepIsTakenOnce(t *testing.T) {
	m, _, b := setup(t)
	plan, err := m.ProposePlan(b.RunID, b.AgentID, []Step{{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.DecidePlan(plan.ID, true); err != nil {
		t.Fatal(err)
	}
	wins := race(64, func(int) error {
		_, err := m.ConsumeStep(b)
		if err != nil && Code(err) != "off_plan" {
			t.Errorf("a losing step: %v, want off_plan", err)
		}
		return err
	})
	if wins != 1 {
		t.Fatalf("one planned step ran %d times", wins)
	}
}

// An approval racing the window's end or the run's end is never usable
// after either: whichever came first, Consume afterwards is refused.
func TestApprovalRacingTheWindowOrTheRunIsNotUsableAfter(t *testing.T) {
	for _, race := range []string{"window", "run"} {
		t.Run(race, func(t *testing.T) {
			approvals := 0
			for i := range 100 {
				m, clock, b := setup(t)
				p := propose(t, m, b)
				clock.Advance(Window-1, 0)
				var wg sync.WaitGroup
				var decideErr error
				decide := func() { defer wg.Done(); _, decideErr = m.Decide(p.ID, true) }
				end := func() {
					defer wg.Done()
					if race == "window" {
						clock.Advance(1, 0)
					} else {
						m.EndRun(b.RunID)
					}
				}
				wg.Add(2)
				switch i % 3 { // both orders, and a real race
				case 0:
					wg.Add(-1)
					decide()
					wg.Add(1)
					go end()
				case 1:
					go decide()
					go end()
				default:
					go end()
					go decide()
				}
				wg.Wait()
				if decideErr == nil {
					approvals++
				}
				if decideErr != nil {
					want := CodeExpired
					if race == "run" {
						want = CodeUnknownRequest
					}
					wantCode(t, decideErr, want)
				}
				if err := m.Consume(p.ID, b); err == nil {
					t.Fatalf("an approval was used after the %s ended (decide: %v)", race, decideErr)
				}
			}
			if approvals == 0 {
				t.Fatal("no decision came before the end: the race was not tested")
			}
		})
	}
}

package consent

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A proposal approved just before its window closes, whose launch check
// comes after it closed, is refused as expired; the history must not say
// a person authorized it (the person's consent was never used).
func TestApprovedThenExpiredIsNotAuthorizedByPerson(t *testing.T) {
	w := newWorld(t)
	clock := &fakeClock{wall: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	w.p.Consent = NewManager(clock)
	// The window closes after the approval was read back, before launch.
	w.p.OnApproved = func(context.Context, *Request) { clock.Advance(Window+time.Second, Window+time.Second) }
	res := w.run(t, w.request(w.decideWith(true, nil)))
	wantRefusal(t, res, "expired")
	st, rule := historyRule(t, res.Envelope.AttemptID)
	if st != "refused" || strings.HasPrefix(rule, "person") {
		t.Fatalf("history %s %q: an expired request is never authorized by a person", st, rule)
	}
	if rule != "consent: expired" {
		t.Fatalf("rule %q, want %q", rule, "consent: expired")
	}
}

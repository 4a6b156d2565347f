package replay

import (
	"bytes"
	"testing"
)

// The sensitive-capture bound of a direct run, driven by events: 1,025
// events each offering a new sensitive value. A machine that could commit
// all 1,025 captures is refused before anything runs; one bounded at
// 1,024 runs all 1,025 events, commits 1,024, refuses the last as
// transition_exhausted (still counted in usage), and no output holds any
// of the 1,025 values.
func TestRunSensitiveCaptureBoundWith1025Events(t *testing.T) {
	const n = MaxSensitiveCaptureOps + 1 // 1,025
	machine := func(maxUses int) obj { return sensitiveCaptureMachine(maxUses, 100_000) }
	events := keyedEvents(n, "value-%04d-sensitive")
	if is := parseRunIssues(t, machine(n), events); !hasIssue(is, CodeSensitiveCaptureExceeded, "$.machine.transitions[1].captures") {
		t.Fatalf("1,025 possible sensitive captures accepted:%s", issuesString(is))
	}
	res := execute(t, machine(MaxSensitiveCaptureOps), events)
	if len(res.Decisions) != n || len(res.TransitionJournal) != MaxSensitiveCaptureOps {
		t.Fatalf("%d decisions, %d transitions", len(res.Decisions), len(res.TransitionJournal))
	}
	if last := res.Decisions[n-1]; last.Outcome != OutcomeTransitionExhausted || last.TransitionSequence != nil {
		t.Fatalf("event 1,025: %+v", last)
	}
	if res.Limits.Usage.Messages != n {
		t.Fatalf("usage %+v: the refused event must count", res.Limits.Usage)
	}
	if b := mustJSON(t, res); bytes.Contains(b, []byte("-sensitive")) {
		t.Fatal("a captured value appears in the output")
	}
}

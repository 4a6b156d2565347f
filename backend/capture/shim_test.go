package capture

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// shimEvents decodes rec's shim events and checks their sequence, times
// and journal entries.
func shimEvents(t *testing.T, rec *Record) []ShimEvent {
	t.Helper()
	var evs []ShimEvent
	last := 0
	for i, raw := range rec.ShimEvents {
		var ev ShimEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Sequence != i || ev.AtMS < last {
			t.Errorf("shim event %d: %s", i, raw)
		}
		last = ev.AtMS
		evs = append(evs, ev)
	}
	journaled := 0
	for _, e := range rec.EventJournal {
		if e.Collection == "shim_events" {
			journaled++
		}
	}
	if journaled != len(evs) {
		t.Errorf("journal lists %d of %d shim events", journaled, len(evs))
	}
	return evs
}

// firstFrameWith is the at_ms of the frame that completes the first
// occurrence of s in the output (-1 when s never appears).
func firstFrameWith(rec *Record, s string) int {
	var b strings.Builder
	for _, f := range rec.Frames {
		b.WriteString(f.Data)
		if strings.Contains(b.String(), s) {
			return f.AtMS
		}
	}
	return -1
}

func shimScenario(t *testing.T, script string, shims ...any) (*Scenario, Options) {
	t.Helper()
	return shScenario(t, script, func(m obj) { m["command_shims"] = shims })
}

func wantEvent(t *testing.T, ev ShimEvent, route int, outcome string, args ...string) {
	t.Helper()
	if ev.Command != "codex" || ev.Outcome != outcome || ev.WorkingDirectory != PlaceholderWorkingDirectory ||
		!slices.Equal(ev.Arguments, args) || (route < 0) != (ev.RouteIndex == nil) || route >= 0 && *ev.RouteIndex != route {
		t.Errorf("shim event %+v (route %v), want route %d %s %q", ev, ev.RouteIndex, route, outcome, args)
	}
}

func TestCaptureShimMatchedReplaysTimedOutput(t *testing.T) {
	sc, opts := shimScenario(t, `echo "path=$PATH"; echo "ledger=$GATEHOUSE_SHIM_LEDGER_URL"; codex --version; echo "rc=$?"`,
		obj{"name": "codex", "routes": []any{shimRoute([]any{"--version"}, []any{
			out(300, "stdout", "gamma\n"), out(0, "stdout", "alpha\n"), out(150, "stderr", "beta\n"),
		}, exitWith(7), 1)}})
	rec := capture(t, sc, opts)
	o := output(rec)
	if !strings.Contains(o, "path=<temporary-root>/shims:/usr/bin:/bin\r\n") || !strings.Contains(o, "ledger=file://<temporary-root>/shim-ledger/\r\n") {
		t.Errorf("environment in %q", o)
	}
	if !strings.Contains(o, "alpha\r\nbeta\r\ngamma\r\nrc=7\r\n") {
		t.Errorf("frames %q", o)
	}
	a, g := firstFrameWith(rec, "alpha"), firstFrameWith(rec, "gamma")
	evs := shimEvents(t, rec)
	if len(evs) != 1 {
		t.Fatalf("shim events %s", rec.ShimEvents)
	}
	wantEvent(t, evs[0], 0, ShimOutcomeMatched, "--version")
	if evs[0].AtMS > a {
		t.Errorf("the call is recorded at %d ms, after its first output at %d ms", evs[0].AtMS, a)
	}
	// Offsets count from the call's reception (its at_ms), not from the
	// first output: a loaded machine may show alpha tens of ms late while
	// gamma stays on time (alpha at 40 ms, gamma at 300 ms was seen). The
	// ledger writes gamma no earlier than 300 ms after the reception, so
	// with times bucketed down to 10 ms it is never seen earlier.
	if a < 0 || g-evs[0].AtMS < 300 {
		t.Errorf("call at %d ms, alpha at %d ms, gamma at %d ms: the 300 ms offset was not kept", evs[0].AtMS, a, g)
	}
	if !slices.ContainsFunc(rec.Limitations, func(s string) bool { return strings.Contains(s, "named pipes") }) {
		t.Errorf("limitations %v", rec.Limitations)
	}
}

func TestCaptureShimUnmatchedAndExhausted(t *testing.T) {
	sc, opts := shScenario(t, `codex x; echo "r1=$?"; codex x; echo "r2=$?"; codex x; echo "r3=$?"; codex "$SECRET" y; echo "r4=$?"`, func(m obj) {
		m["environment"] = obj{"PATH": "/usr/bin:/bin", "SECRET": "hunter22"}
		m["secret_aliases"] = []any{"SECRET"}
		m["command_shims"] = []any{obj{"name": "codex", "routes": []any{
			shimRoute([]any{"x"}, []any{out(0, "stdout", "ok\n")}, exitWith(0), 2),
		}}}
	})
	rec := capture(t, sc, opts)
	o := output(rec)
	// unmatched and exhausted calls exit 127 without writing anything:
	// the target's streams carry only what routes declare
	if want := "ok\r\nr1=0\r\nok\r\nr2=0\r\nr3=127\r\nr4=127\r\n"; o != want {
		t.Errorf("frames %q, want %q", o, want)
	}
	evs := shimEvents(t, rec)
	if len(evs) != 4 {
		t.Fatalf("shim events %s", rec.ShimEvents)
	}
	wantEvent(t, evs[0], 0, ShimOutcomeMatched, "x")
	wantEvent(t, evs[1], 0, ShimOutcomeMatched, "x")
	wantEvent(t, evs[2], 0, ShimOutcomeExhausted, "x")
	wantEvent(t, evs[3], -1, ShimOutcomeUnmatched, RedactedSecret, "y")
	if b, _ := json.Marshal(rec); strings.Contains(string(b), "hunter22") {
		t.Error("record leaks the secret")
	}
	if rec.Truncated {
		t.Errorf("truncated: %v", rec.Limitations)
	}
}

func TestCaptureShimSignalTermination(t *testing.T) {
	sig := func(args, name string) obj {
		return shimRoute([]any{args}, []any{out(0, "stdout", args+"!\n")}, obj{"type": "signal", "signal": name}, 1)
	}
	sc, opts := shimScenario(t, `codex term; echo "t=$?"; codex kill; echo "k=$?"; codex fg; echo "f=$?"; codex int & wait $!; echo "i=$?"`,
		obj{"name": "codex", "routes": []any{sig("term", "SIGTERM"), sig("kill", "SIGKILL"), sig("fg", "SIGINT"), sig("int", "SIGINT")}})
	rec := capture(t, sc, opts)
	// A background job of a non-interactive sh ignores SIGINT: the shim
	// then exits 128+2 itself (a documented limitation).
	// sh reports the signals of its foreground jobs ("Terminated", "Killed").
	if o := output(rec); !strings.Contains(o, "term!\r\nTerminated\r\nt=143\r\nkill!\r\nKilled\r\nk=137\r\nfg!\r\nf=130\r\nint!\r\ni=130\r\n") {
		t.Errorf("frames %q", o)
	}
	evs := shimEvents(t, rec)
	if len(evs) != 4 {
		t.Fatalf("shim events %s", rec.ShimEvents)
	}
	for i, args := range []string{"term", "kill", "fg", "int"} {
		wantEvent(t, evs[i], i, ShimOutcomeMatched, args)
	}
	if rec.Exit.Code == nil || *rec.Exit.Code != 0 {
		t.Errorf("exit %+v", rec.Exit)
	}
}

func TestCaptureShimArgumentsMatchExactly(t *testing.T) {
	args := []any{"a b", "it's", `"q"`, "", "x\ny", "$HOME", "*", `back\slash`}
	sc, opts := shimScenario(t, `codex 'a b' "it's" '"q"' '' 'x
y' '$HOME' '*' 'back\slash'; echo "exact=$?"; codex 'a b' "it's" '"q"' '' 'x
y' '$HOME' '*' 'back\slash' ''; echo "extra=$?"; codex 'a  b'; echo "spaces=$?"`,
		obj{"name": "codex", "routes": []any{shimRoute(args, []any{out(0, "stdout", "matched\n")}, exitWith(5), 3)}})
	rec := capture(t, sc, opts)
	if o := output(rec); !strings.Contains(o, "matched\r\nexact=5\r\n") || !strings.Contains(o, "extra=127") || !strings.Contains(o, "spaces=127") {
		t.Errorf("frames %q", o)
	}
	evs := shimEvents(t, rec)
	if len(evs) != 3 {
		t.Fatalf("shim events %s", rec.ShimEvents)
	}
	strs := make([]string, len(args))
	for i, a := range args {
		strs[i] = a.(string)
	}
	wantEvent(t, evs[0], 0, ShimOutcomeMatched, strs...)
	wantEvent(t, evs[1], -1, ShimOutcomeUnmatched, append(strs, "")...)
	wantEvent(t, evs[2], -1, ShimOutcomeUnmatched, "a  b")
}

func TestCaptureShimConcurrentBackgroundJobs(t *testing.T) {
	route := func(n string) obj {
		return shimRoute([]any{n}, []any{out(0, "stdout", "start"+n+"\n"), out(400, "stdout", "end"+n+"\n")}, exitWith(0), 1)
	}
	sc, opts := shimScenario(t, `codex 1 & codex 2 & wait; echo done`, obj{"name": "codex", "routes": []any{route("1"), route("2")}})
	rec := capture(t, sc, opts)
	o := output(rec)
	s1, s2, e1, e2 := strings.Index(o, "start1"), strings.Index(o, "start2"), strings.Index(o, "end1"), strings.Index(o, "end2")
	if s1 < 0 || s2 < 0 || e1 < 0 || e2 < 0 || max(s1, s2) > min(e1, e2) || !strings.HasSuffix(o, "done\r\n") {
		t.Errorf("the calls did not overlap: %q", o)
	}
	evs := shimEvents(t, rec)
	if len(evs) != 2 || evs[0].Outcome != ShimOutcomeMatched || evs[1].Outcome != ShimOutcomeMatched ||
		*evs[0].RouteIndex == *evs[1].RouteIndex {
		t.Fatalf("shim events %s", rec.ShimEvents)
	}
	// Timed from the first call's reception: serialized calls print
	// "done" at least 800 ms after it (times are bucketed down to 10 ms,
	// a multiple), overlapping ones about 400 ms.
	if d := firstFrameWith(rec, "done") - evs[0].AtMS; d >= 800 {
		t.Errorf("two overlapping 400 ms calls took %d ms after the first was received", d)
	}
}

func TestCaptureShimEventsLimit(t *testing.T) {
	sc, opts := shScenario(t, `codex; echo "a=$?"; codex; echo "b=$?"`, func(m obj) {
		m["limits"] = obj{"protocol_events": 1}
		m["command_shims"] = []any{obj{"name": "codex", "routes": []any{shimRoute([]any{}, []any{}, exitWith(3), 2)}}}
	})
	rec := capture(t, sc, opts)
	if o := output(rec); !strings.Contains(o, "a=3\r\nb=3\r\n") {
		t.Errorf("frames %q: calls past the limit must still be answered", o)
	}
	if evs := shimEvents(t, rec); len(evs) != 1 || !rec.Truncated ||
		!slices.Contains(rec.Limitations, "shim events exceeded limits.protocol_events (1); later shim calls were answered but not recorded") {
		t.Errorf("events %s truncated %v limitations %v", rec.ShimEvents, rec.Truncated, rec.Limitations)
	}
}

func TestCaptureShimCancellationAndTimeoutReleaseTheLedger(t *testing.T) {
	slow := obj{"name": "codex", "routes": []any{shimRoute([]any{}, []any{out(20000, "stdout", "late\n")}, exitWith(0), 1)}}
	t.Run("cancel", func(t *testing.T) {
		sc, opts := shimScenario(t, `codex; echo "rc=$?"`, slow)
		ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
		defer cancel()
		before := runtime.NumGoroutine()
		rec, err := Capture(ctx, newSupervisor(t), sc, opts)
		if rec != nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("record %v, error %v", rec != nil, err)
		}
		if entries, _ := os.ReadDir(opts.TempDir); len(entries) > 0 {
			t.Errorf("temporary root left: %v", entries)
		}
		for deadline := time.Now().Add(2 * time.Second); runtime.NumGoroutine() > before+1; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("goroutines: %d before the capture, %d after", before, runtime.NumGoroutine())
				break
			}
		}
	})
	t.Run("timeout", func(t *testing.T) {
		sc, opts := shScenario(t, `codex; echo "rc=$?"`, func(m obj) {
			m["timeout_ms"] = 400
			m["command_shims"] = []any{slow}
		})
		rec := capture(t, sc, opts) // checkRecord: nothing left behind
		if rec.Exit.Reason != ExitReasonTimeout || strings.Contains(output(rec), "late") {
			t.Errorf("exit %+v output %q", rec.Exit, output(rec))
		}
		if evs := shimEvents(t, rec); len(evs) != 1 || evs[0].Outcome != ShimOutcomeMatched {
			t.Errorf("shim events %s", rec.ShimEvents)
		}
	})
}

package capture

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/reactive"
)

// Reactive scenarios with real programs in real PTYs: every answer is
// sent when the graph sees the prompt in the recorded output, never at a
// guessed time.

func rxText(text string) obj { return obj{"kind": "terminal_text", "text": text} }

func rxGoto(state string) obj { return obj{"kind": "goto", "state": state} }

var rxPass = obj{"kind": "finish", "outcome": "passed"}

func rxInput(data string) []any { return []any{obj{"type": "send_input", "data": data}} }

// rxState is a state with a 3 s deadline and the given transitions.
func rxState(id string, on ...obj) obj {
	list := make([]any, len(on))
	for i, o := range on {
		list[i] = o
	}
	return obj{"id": id, "deadline_ms": 3000, "on": list}
}

func rxOn(id string, when obj, actions []any, target obj) obj {
	if actions == nil {
		actions = []any{}
	}
	return obj{"id": id, "priority": 1, "when": when, "actions": actions, "target": target}
}

func rxGraph(deadline int, states ...obj) obj {
	list := make([]any, len(states))
	for i, s := range states {
		list[i] = s
	}
	return obj{"version": 1, "initial_state": states[0]["id"], "deadline_ms": deadline, "states": list}
}

// rxCapture captures script under graph and returns the record and its
// decoded reactive run.
func rxCapture(t *testing.T, script string, graph obj) (*Record, reactive.Run) {
	t.Helper()
	sc, opts := shScenario(t, script, func(m obj) { m["reactive"] = graph; m["timeout_ms"] = 10000 })
	rec := capture(t, sc, opts)
	var run reactive.Run
	if err := json.Unmarshal(rec.ReactiveRun, &run); err != nil {
		t.Fatalf("reactive_run %s: %v", rec.ReactiveRun, err)
	}
	return rec, run
}

// rxIDs are the transition ids of a run in order.
func rxIDs(run reactive.Run) string {
	var ids []string
	for _, s := range run.Transitions {
		ids = append(ids, s.TransitionID)
	}
	return strings.Join(ids, ",")
}

// rxOrder is the capture order of event id in rec's journal.
func rxOrder(t *testing.T, rec *Record, id string) int {
	t.Helper()
	for i, e := range rec.EventJournal {
		if id == e.Collection+"["+itoaTest(e.Index)+"]" || id == e.Collection && (id == "exit" || id == "settlement") {
			return i
		}
	}
	t.Fatalf("%s is not in the journal", id)
	return -1
}

func itoaTest(i int) string { b, _ := json.Marshal(i); return string(b) }

var promptGraph = rxGraph(8000,
	rxState("ask", rxOn("answer", rxText("Name? "), rxInput("bob\r"), rxGoto("greeted"))),
	rxState("greeted", rxOn("done", rxText("hi bob"), nil, rxPass)))

func TestReactivePromptAnsweredAfterItAppears(t *testing.T) {
	rec, run := rxCapture(t, `sleep 0.3; printf "Name? "; read n; echo "hi $n"`, promptGraph)
	if run.Status != reactive.StatusCompleted || run.Outcome != reactive.OutcomePassed || run.ActiveState != "greeted" || len(run.Controls) != 0 {
		t.Fatalf("run %s", rec.ReactiveRun)
	}
	if rxIDs(run) != "answer,done" {
		t.Fatalf("transitions %s", rxIDs(run))
	}
	if !strings.Contains(output(rec), "hi bob") || rec.Exit.Code == nil || *rec.Exit.Code != 0 {
		t.Fatalf("output %q exit %+v", output(rec), rec.Exit)
	}
	// The answer is evidenced by the interaction event it produced, and
	// it was dispatched only after the prompt was recorded.
	answer := run.Transitions[0]
	if len(answer.ActionEvidenceIDs) != 1 || answer.ActionEvidenceIDs[0] != "interaction_events[0]" || len(rec.InteractionEvents) != 1 {
		t.Fatalf("evidence %v, interactions %+v", answer.ActionEvidenceIDs, rec.InteractionEvents)
	}
	ie := rec.InteractionEvents[0]
	if ie.Type != EventInput || ie.Data != "bob\r" || ie.Outcome != OutcomeDispatched {
		t.Fatalf("interaction %+v", ie)
	}
	prompt := answer.MatchedEventIDs[len(answer.MatchedEventIDs)-1]
	if !strings.HasPrefix(prompt, "frames[") {
		t.Fatalf("matched %v", answer.MatchedEventIDs)
	}
	if p, i := rxOrder(t, rec, prompt), rxOrder(t, rec, "interaction_events[0]"); p >= i || p > answer.AdmittedOrder {
		t.Fatalf("prompt at order %d, admitted %d, input at %d", p, answer.AdmittedOrder, i)
	}
	var idx int
	json.Unmarshal([]byte(strings.TrimSuffix(strings.TrimPrefix(prompt, "frames["), "]")), &idx)
	if f := rec.Frames[idx]; !strings.Contains(f.Data, "Name? ") || ie.DispatchedAtMS < f.AtMS || f.AtMS < 300 {
		t.Fatalf("prompt frame %+v, input dispatched at %d", f, ie.DispatchedAtMS)
	}
}

func TestReactiveCombinators(t *testing.T) {
	// all: both lines, in either order; repeat: exactly three ticks;
	// any + sequence + event: the interaction event of the "x" answer
	// followed by "end" (the other branch never matches).
	script := `printf "B\n"; sleep 0.05; printf "A\n"; read a; printf "tick\ntick\ntick\n"; read b; sleep 0.05; echo end; sleep 0.2`
	graph := rxGraph(8000,
		rxState("lines", rxOn("both", obj{"kind": "all", "of": []any{rxText("A\r\n"), rxText("B\r\n")}}, rxInput("go\r"), rxGoto("ticks"))),
		rxState("ticks", rxOn("three", obj{"kind": "repeat", "min": 3, "max": 3, "of": rxText("tick")}, rxInput("x\r"), rxGoto("tail"))),
		rxState("tail", rxOn("finish", obj{"kind": "any", "of": []any{
			rxText("never printed"),
			obj{"kind": "sequence", "of": []any{
				obj{"kind": "event", "source": "interaction", "exact": obj{"type": "input", "data": "x\r", "outcome": "dispatched"}},
				rxText("end"),
			}},
		}}, nil, rxPass)))
	rec, run := rxCapture(t, script, graph)
	if run.Outcome != reactive.OutcomePassed || rxIDs(run) != "both,three,finish" {
		t.Fatalf("run %s\noutput %q", rec.ReactiveRun, output(rec))
	}
	if m := run.Transitions[0].MatchedEventIDs; len(m) != 2 {
		t.Errorf("all matched %v; want the frames of both lines", m)
	}
	fin := run.Transitions[2].MatchedEventIDs
	if len(fin) != 2 || fin[0] != "interaction_events[1]" || !strings.HasPrefix(fin[1], "frames[") {
		t.Errorf("sequence matched %v", fin)
	}
	if rxOrder(t, rec, fin[0]) >= rxOrder(t, rec, fin[1]) {
		t.Errorf("sequence out of order: %v", fin)
	}
}

func TestReactiveRepeatAboveMaxNeverMatches(t *testing.T) {
	graph := rxGraph(3000, obj{"id": "ticks", "deadline_ms": 600, "on": []any{
		rxOn("two", obj{"kind": "repeat", "min": 1, "max": 2, "of": rxText("tick")}, nil, rxPass)}})
	rec, run := rxCapture(t, `printf "tick tick tick\n"; sleep 5`, graph)
	if run.Outcome != reactive.OutcomePredicateTimeout || len(run.Transitions) != 0 {
		t.Fatalf("run %s", rec.ReactiveRun)
	}
}

func TestReactivePredicateTimeout(t *testing.T) {
	graph := rxGraph(5000, obj{"id": "wait", "deadline_ms": 400, "on": []any{rxOn("never", rxText("never printed"), nil, rxPass)}})
	begin := time.Now()
	rec, run := rxCapture(t, `printf "ready\n"; sleep 20`, graph)
	if run.Status != reactive.StatusStopped || run.Outcome != reactive.OutcomePredicateTimeout || run.ActiveState != "wait" {
		t.Fatalf("run %s", rec.ReactiveRun)
	}
	c := run.Controls[0]
	if len(run.Controls) != 1 || c.Kind != reactive.OutcomePredicateTimeout || c.AtMS < 400 || c.LastAdmittedOrder == nil || *c.LastAdmittedOrder >= len(rec.EventJournal) {
		t.Fatalf("controls %+v", run.Controls)
	}
	// The capture ended at the deadline instead of the target's 20 s.
	if rec.Exit.Reason != ExitReasonTimeout || time.Since(begin) > 5*time.Second || !hasLimitation(rec, "stopped with predicate_timeout") {
		t.Fatalf("exit %+v after %v; limitations %q", rec.Exit, time.Since(begin), rec.Limitations)
	}
}

func hasLimitation(rec *Record, part string) bool {
	for _, l := range rec.Limitations {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}

func TestReactiveScenarioDeadline(t *testing.T) {
	// The state deadlines equal the scenario's, but the state is entered
	// after launch: the scenario deadline comes first.
	graph := rxGraph(500,
		obj{"id": "start", "deadline_ms": 500, "on": []any{rxOn("ready", rxText("ready"), nil, rxGoto("wait"))}},
		obj{"id": "wait", "deadline_ms": 500, "on": []any{rxOn("never", rxText("never printed"), nil, rxPass)}})
	rec, run := rxCapture(t, `printf "ready\n"; sleep 20`, graph)
	if run.Outcome != reactive.OutcomeScenarioDeadline || run.ActiveState != "wait" || rxIDs(run) != "ready" {
		t.Fatalf("run %s", rec.ReactiveRun)
	}
	if c := run.Controls[0]; c.Kind != reactive.OutcomeScenarioDeadline || c.AtMS < 500 || *c.LastAdmittedOrder < run.Transitions[0].AdmittedOrder {
		t.Fatalf("control %+v", c)
	}
}

func TestReactiveTargetLost(t *testing.T) {
	graph := rxGraph(5000, rxState("wait", rxOn("never", rxText("never printed"), nil, rxPass)))
	rec, run := rxCapture(t, `printf "bye\n"; exit 3`, graph)
	if run.Outcome != reactive.OutcomeTargetLost || len(run.Controls) != 1 || run.Controls[0].Kind != reactive.OutcomeTargetLost {
		t.Fatalf("run %s", rec.ReactiveRun)
	}
	if rec.Exit.Reason != ExitReasonExited || rec.Exit.Code == nil || *rec.Exit.Code != 3 {
		t.Fatalf("exit %+v", rec.Exit)
	}
	// The control comes after every observation, the exit included.
	if o := run.Controls[0].LastAdmittedOrder; o == nil || *o < rxOrder(t, rec, "exit") {
		t.Fatalf("control %+v before the exit at %d", run.Controls[0], rxOrder(t, rec, "exit"))
	}
}

func TestReactivePreflightRefusesRenderedTrigger(t *testing.T) {
	graph := rxGraph(5000, rxState("wait", rxOn("screen", obj{"kind": "event", "source": "terminal_rendered", "exact": obj{"cursor_x": 0}}, nil, rxPass)))
	sc, opts := shScenario(t, `touch launched`, func(m obj) { m["reactive"] = graph })
	rec, err := Capture(context.Background(), newSupervisor(t), sc, opts)
	var pe *PreflightError
	if rec != nil || !errors.As(err, &pe) {
		t.Fatalf("rec %v err %v", rec, err)
	}
	if len(pe.Issues) != 1 || pe.Issues[0].Code != reactive.CodeRefusedSource || pe.Issues[0].Path != "$.reactive.states[0].on[0].when.source" {
		t.Fatalf("issues %v", pe.Issues)
	}
	if _, err := os.Stat(filepath.Join(sc.WorkingDirectory, "launched")); !os.IsNotExist(err) {
		t.Fatalf("the target was launched: %v", err)
	}
}

func TestReactiveCheckpointAndCloseStdin(t *testing.T) {
	// A checkpoint action, a frontier at that checkpoint, and close_stdin
	// ending cat's input.
	dir := t.TempDir()
	graph := rxGraph(8000,
		rxState("write", rxOn("written", rxText("wrote"), []any{obj{"type": "checkpoint", "name": "after_write"}, obj{"type": "close_stdin"}}, rxGoto("eof"))),
		rxState("eof", rxOn("closed", obj{"kind": "terminal_text", "text": "cat done", "since": obj{"kind": "checkpoint", "name": "after_write"}}, nil, rxPass)))
	sc, opts := shScenario(t, `echo x > `+dir+`/f; echo wrote; cat; echo "cat done"`, func(m obj) {
		m["reactive"], m["filesystem_roots"] = graph, []any{dir}
	})
	rec := capture(t, sc, opts)
	var run reactive.Run
	json.Unmarshal(rec.ReactiveRun, &run)
	if run.Outcome != reactive.OutcomePassed || rxIDs(run) != "written,closed" {
		t.Fatalf("run %s output %q", rec.ReactiveRun, output(rec))
	}
	ev := run.Transitions[0].ActionEvidenceIDs
	if len(ev) != 2 || ev[0] != "filesystem_checkpoints[1]" || ev[1] != "interaction_events[0]" {
		t.Fatalf("evidence %v", ev)
	}
	if cp := rec.FilesystemCheckpoints[1]; cp.Name != "after_write" || len(cp.Effects) != 1 || cp.Effects[0].Status != "created" {
		t.Fatalf("checkpoint %+v", cp)
	}
	if ie := rec.InteractionEvents[0]; ie.Type != EventStdinClose || ie.Outcome != OutcomeDispatched {
		t.Fatalf("interaction %+v", ie)
	}
}

func TestReactiveSensitiveInputRedacted(t *testing.T) {
	graph := rxGraph(8000,
		rxState("ask", rxOn("pw", rxText("Password: "), []any{obj{"type": "send_input", "data": "hunter2\r", "sensitive": true}}, rxGoto("check"))),
		rxState("check", rxOn("ok", rxText("got <redacted>"), nil, rxPass)))
	rec, run := rxCapture(t, `printf "Password: "; read p; echo "got $p"`, graph)
	if run.Outcome != reactive.OutcomePassed {
		t.Fatalf("run %s output %q", rec.ReactiveRun, output(rec))
	}
	b, _ := json.Marshal(rec)
	if strings.Contains(string(b), "hunter2") {
		t.Fatal("the sensitive input is in the record")
	}
	if d := rec.InteractionEvents[0].Data; d != RedactedInput(len("hunter2\r")) {
		t.Fatalf("interaction data %q", d)
	}
}

func TestReactiveTimedEventsStayTimed(t *testing.T) {
	// A timed input at 300 ms and a reactive answer to a prompt: both are
	// interaction events in dispatch order, and the graph has only the
	// transitions it declares.
	graph := rxGraph(8000, rxState("ask", rxOn("answer", rxText("second? "), rxInput("two\r"), rxGoto("done"))),
		rxState("done", rxOn("end", rxText("got one two"), nil, rxPass)))
	sc, opts := shScenario(t, `read a; printf "second? "; read b; echo "got $a $b"`, func(m obj) {
		m["reactive"], m["events"] = graph, []any{obj{"type": "input", "at_ms": 300, "data": "one\r"}}
	})
	rec := capture(t, sc, opts)
	var run reactive.Run
	json.Unmarshal(rec.ReactiveRun, &run)
	if run.Outcome != reactive.OutcomePassed || rxIDs(run) != "answer,end" {
		t.Fatalf("run %s output %q", rec.ReactiveRun, output(rec))
	}
	ie := rec.InteractionEvents
	if len(ie) != 2 || ie[0].Data != "one\r" || ie[0].ScheduledAtMS != 300 || ie[1].Data != "two\r" || ie[1].ScheduledAtMS < 300 {
		t.Fatalf("interactions %+v", ie)
	}
	if run.Transitions[0].ActionEvidenceIDs[0] != "interaction_events[1]" {
		t.Fatalf("evidence %v", run.Transitions[0].ActionEvidenceIDs)
	}
}

func TestReactiveDeterministicJournal(t *testing.T) {
	// The same program and graph, 20 times: the same transition journal
	// (ids, states, matched observations and action evidence). The
	// terminal does not echo the answer: its echo and "hi bob" 50 ms later
	// were one PTY read on a loaded machine (matched frames[1] instead of
	// frames[2]); without it each frame is one write made while nothing
	// else is being written.
	type step struct {
		ID, Before string
		After      *string
		Matched    []string
		Evidence   []string
	}
	var first []step
	sup := newSupervisor(t)
	for i := 0; i < 20; i++ {
		sc, opts := shScenario(t, `stty -echo; printf "Name? "; read n; sleep 0.05; echo "hi $n"`, func(m obj) { m["reactive"] = promptGraph })
		rec, err := Capture(context.Background(), sup, sc, opts)
		if err != nil {
			t.Fatal(err)
		}
		checkRecord(t, rec, opts)
		var run reactive.Run
		json.Unmarshal(rec.ReactiveRun, &run)
		if run.Outcome != reactive.OutcomePassed {
			t.Fatalf("run %d: %+v", i, run)
		}
		var got []step
		for _, s := range run.Transitions {
			got = append(got, step{s.TransitionID, s.StateBefore, s.StateAfter, s.MatchedEventIDs, s.ActionEvidenceIDs})
		}
		if i == 0 {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d journal %+v differs from %+v", i, got, first)
		}
	}
}

func TestReactiveRunVerification(t *testing.T) {
	rec, _ := rxCapture(t, `printf "Name? "; read n; echo "hi $n"`, promptGraph)
	b, _ := json.Marshal(rec)
	if issues := record.Verify(b); len(issues) > 0 {
		t.Fatalf("verify: %v", IssueList(issues))
	}
	mutations := map[string]struct {
		f    func(run map[string]any)
		path string
	}{
		"unknown transition": {func(r map[string]any) { step(r, 0)["transition_id"] = "done" }, "$.reactive_run.transitions[0].transition_id"},
		"outcome":            {func(r map[string]any) { r["outcome"] = "predicate_timeout" }, "$.reactive_run.status"},
		"dropped transition": {func(r map[string]any) { r["transitions"] = r["transitions"].([]any)[1:] }, "$.reactive_run.transitions[0].state_before"},
		"later observation":  {func(r map[string]any) { step(r, 0)["matched_event_ids"] = []any{"settlement"} }, "$.reactive_run.transitions[0].matched_event_ids[0]"},
		"missing evidence":   {func(r map[string]any) { step(r, 0)["action_evidence_ids"] = []any{} }, "$.reactive_run.transitions[0].action_evidence_ids"},
		"reordered control": {func(r map[string]any) {
			r["status"], r["outcome"] = "stopped", "target_lost"
			r["transitions"] = r["transitions"].([]any)[:1]
			r["active_state"] = "greeted"
			r["controls"] = []any{obj{"sequence": 0, "kind": "target_lost", "at_ms": 0, "state": "greeted", "last_admitted_order": 0}}
		}, "$.reactive_run.controls[0].last_admitted_order"},
		"null run": {func(r map[string]any) { clear(r) }, "$.reactive_run"},
	}
	for name, m := range mutations {
		var doc map[string]any
		json.Unmarshal(b, &doc)
		run := doc["reactive_run"].(map[string]any)
		m.f(run)
		if name == "null run" {
			doc["reactive_run"] = nil
		}
		mb, _ := json.Marshal(doc)
		issues := record.Verify(mb)
		found := false
		for _, is := range issues {
			found = found || is.Path == m.path
		}
		if !found {
			t.Errorf("%s: want an issue at %s, got %v", name, m.path, issues)
		}
	}
}

func step(run map[string]any, i int) map[string]any {
	return run["transitions"].([]any)[i].(map[string]any)
}

func TestReactiveScenarioParseRules(t *testing.T) {
	base := func(edit func(m obj)) []byte {
		m := obj{"approved": true, "executable": "/bin/sh", "working_directory": "/",
			"environment": obj{"TOKEN": "s3cr3t"}, "secret_aliases": []any{"TOKEN"},
			"checkpoints": []any{obj{"name": "mid", "trigger": obj{"type": "root_exit"}}},
			"reactive": rxGraph(5000, rxState("ask", rxOn("answer", obj{"kind": "terminal_text", "text": "x", "since": obj{"kind": "checkpoint", "name": "mid"}},
				[]any{obj{"type": "send_input", "data": "pw\r", "sensitive": true}}, rxPass)))}
		if edit != nil {
			edit(m)
		}
		return mustJSON(t, m)
	}
	sc := parseOK(t, base(nil)) // a frontier at a scenario checkpoint
	commits, err := sc.Commitments()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(commits.Scenario), "pw\\r") || !strings.Contains(string(commits.Scenario), RedactedInput(3)) {
		t.Fatalf("sensitive action data in manifest.scenario: %s", commits.Scenario)
	}
	reactiveOf := func(m obj) obj { return m["reactive"].(obj) }
	for _, c := range []struct {
		name, code, path string
		edit             func(m obj)
	}{
		{"secret in id", CodeConflict, "$.reactive.states[0].id", func(m obj) {
			g := reactiveOf(m)
			g["states"].([]any)[0].(obj)["id"], g["initial_state"] = "s3cr3t-state", "s3cr3t-state"
		}},
		{"action reuses a scenario checkpoint", CodeDuplicateEntry, "$.reactive.states[0].on[0].actions[0].name", func(m obj) {
			reactiveOf(m)["states"].([]any)[0].(obj)["on"].([]any)[0].(obj)["actions"] = []any{obj{"type": "checkpoint", "name": "mid"}}
		}},
		{"unknown checkpoint", reactive.CodeUnknownCheckpoint, "$.reactive.states[0].on[0].when.since.name", func(m obj) { m["checkpoints"] = []any{} }},
		{"deadline after timeout", reactive.CodeDeadlineOrder, "$.reactive.deadline_ms", func(m obj) { m["timeout_ms"] = 4999 }},
		{"bad trigger", reactive.CodeInvalidVariant, "$.reactive.states[0].on[0].when.kind", func(m obj) {
			reactiveOf(m)["states"].([]any)[0].(obj)["on"].([]any)[0].(obj)["when"] = obj{"kind": "regex"}
		}},
	} {
		_, issues := ParseScenario(base(c.edit))
		if !hasIssue(issues, c.code, c.path) {
			t.Errorf("%s: want %s at %s, got %v", c.name, c.code, c.path, issues)
		}
	}
}

func TestReactiveAmbiguousMatch(t *testing.T) {
	// Two transitions of equal priority become true on the same output.
	graph := rxGraph(5000, rxState("ask",
		rxOn("one", rxText("Name"), nil, rxPass),
		rxOn("two", rxText("? "), nil, rxPass)))
	begin := time.Now()
	rec, run := rxCapture(t, `printf "Name? "; sleep 20`, graph)
	if run.Outcome != reactive.OutcomeAmbiguousMatch || len(run.Transitions) != 0 || run.Controls[0].Kind != reactive.OutcomeAmbiguousMatch {
		t.Fatalf("run %s", rec.ReactiveRun)
	}
	if time.Since(begin) > 5*time.Second || rec.Exit.Reason != ExitReasonTimeout {
		t.Fatalf("exit %+v after %v", rec.Exit, time.Since(begin))
	}
}

func TestReactiveCaptureIncompleteAtALimit(t *testing.T) {
	// The output limit truncates the capture while the graph waits: the
	// run cannot see what it waits for any more.
	graph := rxGraph(5000, rxState("wait", rxOn("never", rxText("never printed"), nil, rxPass)))
	sc, opts := shScenario(t, `head -c 300 /dev/zero | tr '\0' x; sleep 20`, func(m obj) {
		m["reactive"], m["limits"] = graph, obj{"output_bytes": 100}
	})
	rec, err := Capture(context.Background(), newSupervisor(t), sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	var run reactive.Run
	json.Unmarshal(rec.ReactiveRun, &run)
	if !rec.Truncated || run.Outcome != reactive.OutcomeCaptureIncomplete || rec.Exit.Reason != ExitReasonTimeout {
		t.Fatalf("truncated %v run %s exit %+v", rec.Truncated, rec.ReactiveRun, rec.Exit)
	}
	b, _ := json.Marshal(rec)
	if issues := record.Verify(b); len(issues) > 0 {
		t.Fatalf("verify: %v", IssueList(issues))
	}
}

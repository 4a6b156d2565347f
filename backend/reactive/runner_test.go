package reactive

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// fakeExec records actions; checkpoint actions admit a filesystem
// observation to the runner while the action runs, like the capture.
type fakeExec struct {
	r        *Runner
	done     []string
	fail     error
	inputs   int
	cps      int
	frames   *int
	observed *int
}

func (f *fakeExec) Perform(a Action) (string, error) {
	if f.fail != nil {
		return "", f.fail
	}
	f.done = append(f.done, a.Type+":"+a.Data+a.Name)
	if a.Type == ActionCheckpoint {
		f.cps++
		f.r.Admit(Observation{Collection: "filesystem_checkpoints", Index: f.cps, Source: SourceFilesystem, Name: a.Name})
		return fmt.Sprintf("filesystem_checkpoints[%d]", f.cps), nil
	}
	f.inputs++
	return fmt.Sprintf("interaction_events[%d]", f.inputs-1), nil
}

type harness struct {
	t      *testing.T
	r      *Runner
	exec   *fakeExec
	now    int
	frames int
	inter  int
}

func newHarness(t *testing.T, doc string) *harness {
	t.Helper()
	sc := mustParse(t, doc, Context{})
	h := &harness{t: t, exec: &fakeExec{}}
	h.r = NewRunner(sc, h.exec, func() int { return h.now }, 10)
	h.exec.r = h.r
	h.r.Start()
	h.r.Admit(Observation{Collection: "filesystem_checkpoints", Index: 0, Source: SourceFilesystem, Name: "before"})
	return h
}

func (h *harness) frame(text string) {
	h.r.Admit(Observation{Collection: "frames", Index: h.frames, Source: SourceTerminalRaw, Text: text})
	h.frames++
}

func (h *harness) interaction(payload string) {
	var l strictjson.Collector
	n := strictjson.Decode([]byte(payload), "$", strictjson.Options{MaxDepth: 8}, &l)
	h.r.Admit(Observation{Collection: "interaction_events", Index: h.inter, Source: SourceInteraction, Payload: n})
	h.inter++
}

func (h *harness) ids() string {
	var out []string
	for _, s := range h.r.Run().Transitions {
		out = append(out, s.TransitionID)
	}
	return strings.Join(out, ",")
}

// graph builds a one-state-per-entry scenario from transition JSON.
func graph(states ...string) string {
	return `{"version":1,"initial_state":"a","deadline_ms":1000,"states":[` + strings.Join(states, ",") + `]}`
}

func st(id string, visits int, on ...string) string {
	return fmt.Sprintf(`{"id":%q,"max_visits":%d,"deadline_ms":500,"on":[%s]}`, id, visits, strings.Join(on, ","))
}

func tr(id string, prio, uses int, when, actions, target string) string {
	if actions == "" {
		actions = "[]"
	}
	return fmt.Sprintf(`{"id":%q,"priority":%d,"max_uses":%d,"when":%s,"actions":%s,"target":%s}`, id, prio, uses, when, actions, target)
}

func text(s string) string {
	b, _ := json.Marshal(s)
	return `{"kind":"terminal_text","text":` + string(b) + `}`
}
func to(state string) string { return `{"kind":"goto","state":"` + state + `"}` }

const pass = `{"kind":"finish","outcome":"passed"}`

func TestRunnerTextAcrossFramesIsChunkIndependent(t *testing.T) {
	doc := graph(st("a", 1, tr("ask", 1, 1, text("Name? "), `[{"type":"send_input","data":"x"}]`, to("b"))),
		st("b", 1, tr("age", 1, 1, text("Age? "), "", pass)))
	for _, chunks := range [][]string{{"Name? Age? "}, {"Na", "me", "? A", "ge? "}, {"Name? ", "Age? "}} {
		h := newHarness(t, doc)
		for _, c := range chunks {
			h.frame(c)
		}
		if run := h.r.Run(); run.Outcome != OutcomePassed || h.ids() != "ask,age" {
			t.Fatalf("%q: %+v", chunks, run)
		}
	}
	// The matched frames are those holding the occurrence.
	h := newHarness(t, doc)
	h.frame("xx Na")
	h.frame("me")
	h.frame("? ")
	if m := h.r.Run().Transitions[0].MatchedEventIDs; strings.Join(m, ",") != "frames[0],frames[1],frames[2]" {
		t.Fatalf("matched %v", m)
	}
}

func TestRunnerPriorityFallbackAndAmbiguity(t *testing.T) {
	// The higher priority transition wins; once its single use is spent,
	// the lower one fires on the next prompt.
	doc := graph(st("a", 3,
		tr("high", 5, 1, text("?"), "", to("a")),
		tr("low", 1, 2, text("?"), "", to("a")),
		tr("end", 0, 1, text("!"), "", pass)))
	h := newHarness(t, doc)
	h.frame("? ")
	h.frame("? ")
	h.frame("!")
	if h.ids() != "high,low,end" || h.r.Run().Outcome != OutcomePassed {
		t.Fatalf("%s %+v", h.ids(), h.r.Run())
	}
	// Two satisfied at the same priority: ambiguous_match, pinned at the
	// frame that made both true.
	doc = graph(st("a", 1, tr("one", 1, 1, text("ab"), "", pass), tr("two", 1, 1, text("b"), "", pass)))
	h = newHarness(t, doc)
	h.frame("a")
	if h.r.Done() {
		t.Fatal("ended early")
	}
	h.frame("b")
	run := h.r.Run()
	if run.Outcome != OutcomeAmbiguousMatch || len(run.Controls) != 1 || *run.Controls[0].LastAdmittedOrder != 2 {
		t.Fatalf("%+v", run)
	}
}

func TestRunnerVisitsBoundAndConsume(t *testing.T) {
	// "loop" re-enters a with max_visits 2: the third "?" finds no
	// eligible transition, so only the deadline can end the run.
	doc := graph(st("a", 2, tr("loop", 1, 5, text("?"), "", to("a")), tr("end", 0, 1, text("!"), "", pass)))
	h := newHarness(t, doc)
	h.frame("???")
	if h.ids() != "loop" {
		t.Fatalf("transitions %s", h.ids())
	}
	h.now = 600
	if !h.r.Expire() || h.r.Run().Outcome != OutcomePredicateTimeout {
		t.Fatalf("%+v", h.r.Run())
	}
	// consume false with a scenario_start frontier sees the same text
	// again; consume true does not.
	for _, c := range []struct {
		consume bool
		want    string
	}{{false, "first,second"}, {true, "first"}} {
		again := fmt.Sprintf(`{"kind":"terminal_text","text":"go","since":{"kind":"scenario_start"},"consume":%t}`, c.consume)
		doc = graph(st("a", 1, tr("first", 1, 1, again, "", to("b"))), st("b", 1, tr("second", 1, 1, again, "", pass)))
		h = newHarness(t, doc)
		h.frame("go")
		if h.ids() != c.want {
			t.Errorf("consume %t: %s", c.consume, h.ids())
		}
	}
}

func TestRunnerCombinatorsAndFrontiers(t *testing.T) {
	ev := `{"kind":"event","source":"interaction","exact":{"type":"input","outcome":"dispatched"}}`
	doc := graph(
		st("a", 1, tr("seq", 1, 1, `{"kind":"sequence","of":[`+text("A")+`,`+ev+`,`+text("B")+`]}`, `[{"type":"checkpoint","name":"cp"}]`, to("b"))),
		st("b", 1, tr("rep", 1, 1, `{"kind":"repeat","min":2,"max":3,"of":{"kind":"terminal_text","text":"B","since":{"kind":"checkpoint","name":"cp"}}}`, "", to("c"))),
		st("c", 1, tr("anyof", 1, 1, `{"kind":"any","of":[`+text("late")+`,{"kind":"terminal_text","text":"A","since":{"kind":"event_id","id":"frames[0]"},"consume":false}]}`, "", pass)))
	h := newHarness(t, doc)
	h.frame("B A")                                                      // B before A does not count for the sequence
	h.interaction(`{"type":"input","outcome":"dispatched","data":"x"}`) // after A
	if h.r.Done() || h.ids() != "" {
		t.Fatalf("fired early: %s", h.ids())
	}
	h.frame("B") // completes the sequence; the checkpoint is taken; B counts once for the repeat
	if h.ids() != "seq" || h.exec.cps != 1 {
		t.Fatalf("transitions %s, checkpoints %d", h.ids(), h.exec.cps)
	}
	if ev := h.r.Run().Transitions[0].ActionEvidenceIDs; len(ev) != 1 || ev[0] != "filesystem_checkpoints[1]" {
		t.Fatalf("evidence %v", ev)
	}
	h.frame("B") // the first B after the checkpoint
	if h.ids() != "seq" {
		t.Fatalf("repeat fired with one B: %s", h.ids())
	}
	h.frame("B A") // the second B; then c's any: A after frames[0]
	if h.ids() != "seq,rep,anyof" || h.r.Run().Outcome != OutcomePassed {
		t.Fatalf("transitions %s %+v", h.ids(), h.r.Run())
	}
}

func TestRunnerActionFailures(t *testing.T) {
	doc := graph(st("a", 1, tr("go", 1, 1, text("x"), `[{"type":"send_input","data":"y"},{"type":"close_stdin"}]`, pass)))
	for _, c := range []struct {
		err  error
		want string
	}{{errors.New("write failed"), OutcomeActionRejected}, {fmt.Errorf("gone: %w", ErrTargetLost), OutcomeTargetLost}, {ErrCaptureEnded, OutcomeCaptureIncomplete}} {
		h := newHarness(t, doc)
		h.exec.fail = c.err
		h.frame("x")
		run := h.r.Run()
		if run.Outcome != c.want || len(run.Transitions) != 1 || len(run.Transitions[0].ActionEvidenceIDs) != 0 {
			t.Errorf("%v: %+v", c.err, run)
		}
	}
}

func TestRunnerDeadlines(t *testing.T) {
	doc := graph(st("a", 1, tr("go", 1, 1, text("x"), "", to("b"))), st("b", 1, tr("end", 1, 1, text("y"), "", pass)))
	h := newHarness(t, doc)
	if h.r.NextDeadline() != 500 {
		t.Fatalf("deadline %d", h.r.NextDeadline())
	}
	h.now = 700
	h.frame("x") // enters b at 700: b's deadline would be 1200, the scenario's is 1000
	if h.r.NextDeadline() != 1000 || h.r.Expire() {
		t.Fatalf("deadline %d", h.r.NextDeadline())
	}
	h.now = 1000
	if !h.r.Expire() || h.r.Run().Outcome != OutcomeScenarioDeadline || h.r.Run().Controls[0].AtMS != 1000 || h.r.NextDeadline() != -1 {
		t.Fatalf("%+v", h.r.Run())
	}
	h.frame("y") // after the control: never evaluated
	if h.r.Run().Outcome != OutcomeScenarioDeadline || len(h.r.Run().Transitions) != 1 {
		t.Fatalf("%+v", h.r.Run())
	}
}

func TestRunnerLongOutputIsLinear(t *testing.T) {
	// 20,000 frames without the awaited text, then the text: each frame
	// is scanned once (a quadratic rescan would take minutes).
	doc := graph(st("a", 1, tr("end", 1, 1, `{"kind":"all","of":[`+text("needle")+`,{"kind":"repeat","min":1,"max":64,"of":`+text("hay")+`}]}`, "", pass)))
	h := newHarness(t, doc)
	chunk := strings.Repeat("hay ", 256)
	for i := 0; i < 20000; i++ {
		h.frame(chunk)
	}
	h.frame("needle")
	if h.r.Run().Outcome != "" {
		t.Fatalf("repeat above max matched: %+v", h.r.Run().Outcome)
	}
}

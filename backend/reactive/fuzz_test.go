package reactive

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// FuzzParse checks that Parse never panics, reports issues only with a
// code and a JSON path, and that an accepted scenario re-encodes to a
// document that parses to the same encoding; an accepted scenario also
// runs over a few frames without panicking.
func FuzzParse(f *testing.F) {
	f.Add([]byte(prompt))
	f.Add([]byte(`{"version":1,"initial_state":"a","deadline_ms":100,"states":[{"id":"a","deadline_ms":50,"on":[` +
		`{"id":"t","priority":0,"when":{"kind":"repeat","min":1,"max":2,"of":{"kind":"any","of":[{"kind":"terminal_text","text":"x","since":{"kind":"checkpoint","name":"before"}},` +
		`{"kind":"event","source":"shim","exact":{"route_index":0},"since":{"kind":"event_id","id":"shim_events[0]"}}]}},` +
		`"actions":[{"type":"checkpoint","name":"c"},{"type":"send_signal","signal":"SIGINT"}],"target":{"kind":"finish","outcome":"passed"}}]}]}`))
	f.Add([]byte(`{"version":2,"states":[{"on":[{"when":{"kind":"all","of":[]}}]}]}`))
	f.Add([]byte(`{"version":1,"version":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, issues := Parse(data, Context{TimeoutMS: 30000, Checkpoints: []string{"mid"}})
		if (sc == nil) == (len(issues) == 0) {
			t.Fatalf("scenario %v with issues %v", sc != nil, issues)
		}
		for _, is := range issues {
			if is.Code == "" || len(is.Path) == 0 || is.Path[0] != '$' {
				t.Fatalf("malformed issue %+v", is)
			}
		}
		if sc == nil {
			return
		}
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		again, issues := Parse(b, Context{TimeoutMS: 30000, Checkpoints: []string{"mid"}})
		if len(issues) > 0 {
			t.Fatalf("re-encoded scenario rejected: %v\n%s", issues, b)
		}
		if b2, _ := json.Marshal(again); string(b2) != string(b) {
			t.Fatalf("round trip differs:\n%s\n%s", b, b2)
		}
		Preflight(sc, "$", []string{"x"})
		now := 0
		r := NewRunner(sc, &fakeExec{}, func() int { return now }, 1)
		r.exec.(*fakeExec).r = r
		r.Start()
		for i, chunk := range []string{"x", string(data), "x"} {
			r.Admit(Observation{Collection: "frames", Index: i, Source: SourceTerminalRaw, Text: chunk})
		}
		now = 1 << 20
		r.Expire()
		if !r.Done() {
			t.Fatal("the run outlived its deadline")
		}
	})
}

// fakeJournal is a journal of the given event ids in order.
type fakeJournal []string

func (j fakeJournal) Order(id string) (int, bool) {
	for i, x := range j {
		if x == id {
			return i, true
		}
	}
	return 0, false
}

func (j fakeJournal) Len() int { return len(j) }

var promptJournal = fakeJournal{"filesystem_checkpoints[0]", "frames[0]", "interaction_events[0]", "frames[1]", "frames[2]", "exit", "settlement", "filesystem_checkpoints[1]"}

const promptRun = `{"status":"completed","outcome":"passed","active_state":"greeted","controls":[],"transitions":[` +
	`{"sequence":0,"at_ms":10,"transition_id":"answer","state_before":"ask","state_after":"greeted","matched_event_ids":["frames[0]"],"action_evidence_ids":["interaction_events[0]"],"admitted_order":1},` +
	`{"sequence":1,"at_ms":20,"transition_id":"done","state_before":"greeted","state_after":null,"matched_event_ids":["frames[2]"],"action_evidence_ids":[],"admitted_order":4}]}`

func verifyRun(t *testing.T, data []byte) []Issue {
	sc := mustParse(t, prompt, Context{})
	var l strictjson.Collector
	n := strictjson.Decode(data, "$.reactive_run", options, &l)
	if n == nil || !l.Empty() {
		return l.List
	}
	VerifyRun(n, sc, "$.reactive_run", promptJournal, &l)
	return l.List
}

func TestVerifyRun(t *testing.T) {
	if issues := verifyRun(t, []byte(promptRun)); len(issues) > 0 {
		t.Fatalf("valid run rejected: %v", Issues(issues))
	}
	for _, c := range []struct{ old, new, path string }{
		{`"admitted_order":1`, `"admitted_order":0`, "$.reactive_run.transitions[0].matched_event_ids[0]"},
		{`"state_after":null`, `"state_after":"ask"`, "$.reactive_run.transitions[1].state_after"},
		{`"controls":[]`, `"controls":[{"sequence":0,"kind":"passed","at_ms":30,"state":"greeted","last_admitted_order":7}]`, "$.reactive_run.controls"},
		{`"active_state":"greeted"`, `"active_state":"ask"`, "$.reactive_run.active_state"},
		{`"at_ms":20`, `"at_ms":5`, "$.reactive_run.transitions[1].at_ms"},
		{`"sequence":1`, `"sequence":2`, "$.reactive_run.transitions[1].sequence"},
		{`["interaction_events[0]"]`, `["filesystem_checkpoints[1]"]`, "$.reactive_run.transitions[0].action_evidence_ids[0]"},
		{`"frames[2]"`, `"frames[9]"`, "$.reactive_run.transitions[1].matched_event_ids[0]"},
		{`"admitted_order":4`, `"admitted_order":8`, "$.reactive_run.transitions[1].admitted_order"},
		{`"status":"completed"`, `"status":"stopped"`, "$.reactive_run.status"},
		{`"outcome":"passed"`, `"outcome":"won"`, "$.reactive_run.outcome"},
		{`"controls":[],`, ``, "$.reactive_run.controls"},
	} {
		doc := strings.Replace(promptRun, c.old, c.new, 1)
		issues := verifyRun(t, []byte(doc))
		found := false
		for _, is := range issues {
			found = found || is.Path == c.path
		}
		if !found {
			t.Errorf("%s → %s: want an issue at %s, got %v", c.old, c.new, c.path, issues)
		}
	}
	stopped := `{"status":"stopped","outcome":"predicate_timeout","active_state":"greeted","controls":[{"sequence":0,"kind":"predicate_timeout","at_ms":30,"state":"greeted","last_admitted_order":3}],"transitions":[` +
		`{"sequence":0,"at_ms":10,"transition_id":"answer","state_before":"ask","state_after":"greeted","matched_event_ids":["frames[0]"],"action_evidence_ids":["interaction_events[0]"],"admitted_order":1}]}`
	if issues := verifyRun(t, []byte(stopped)); len(issues) > 0 {
		t.Fatalf("valid stopped run rejected: %v", Issues(issues))
	}
	early := strings.Replace(stopped, `"last_admitted_order":3`, `"last_admitted_order":0`, 1)
	if issues := verifyRun(t, []byte(early)); len(issues) != 1 || issues[0].Path != "$.reactive_run.controls[0].last_admitted_order" {
		t.Fatalf("a control pinned before a used observation: %v", issues)
	}
}

// FuzzVerifyRun checks that VerifyRun never panics on any run document.
func FuzzVerifyRun(f *testing.F) {
	f.Add([]byte(promptRun))
	f.Add([]byte(`{"status":"stopped","outcome":"target_lost","active_state":"ask","controls":[{"sequence":0,"kind":"target_lost","at_ms":0,"state":"ask","last_admitted_order":null}],"transitions":[]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, is := range verifyRun(t, data) {
			if !strings.HasPrefix(is.Path, "$") || is.Code == "" {
				t.Fatalf("malformed issue %+v", is)
			}
		}
	})
}

package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/compare"
	"github.com/gatehouse/gatehouse/backend/replay"
	"github.com/gatehouse/gatehouse/docs"
)

func compilePublished(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	doc, err := docs.Bundled(file)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(doc)
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource(file, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return s
}

// The published scenario schema and the parser agree on a corpus of
// scenarios: every example both accept, every broken one both reject.
func TestScenarioSchemaMatchesParser(t *testing.T) {
	s := compilePublished(t, "capture-scenario.schema.json")
	valid := []string{
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp"}`,
		`{"approved":true,"executable":"/bin/sh","arguments":["-c","printf hi"],"working_directory":"/tmp","timeout_ms":5000,"settle_ms":0,"idle_timeout_ms":1000}`,
		`{"approved":true,"executable":"/usr/bin/env","working_directory":"/tmp","environment":{"A_B":"1","TOKEN":"s3cret"},"secret_aliases":["TOKEN"],"inherit_environment":["LANG"],"network_access":"host","filesystem_roots":["/tmp"]}`,
		`{"approved":true,"executable":"/bin/cat","working_directory":"/tmp","terminal":{"columns":100,"rows":30,"scrollback":0},
		  "events":[{"type":"input","at_ms":0,"data":"hello\n"},{"type":"resize","at_ms":10,"columns":90,"rows":20},{"type":"input","at_ms":20,"data":"pw","sensitive":true},{"type":"signal","at_ms":30,"signal":"SIGINT"}]}`,
	}
	broken := []string{
		`{}`,
		`{"approved":false,"executable":"/bin/echo","working_directory":"/tmp"}`,
		`{"approved":"yes","executable":"/bin/echo","working_directory":"/tmp"}`,
		`{"approved":true,"executable":"echo","working_directory":"/tmp"}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"tmp"}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","extra":1}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","arguments":"-n"}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","arguments":[1]}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","environment":{"1BAD":"x"}}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","environment":{"A":1}}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","network_access":"none"}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","timeout_ms":0}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","timeout_ms":300001}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","settle_ms":10001}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","terminal":{"columns":0}}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","terminal":{"colour":true}}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","events":[{"type":"input","at_ms":0}]}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","events":[{"type":"signal","at_ms":0,"signal":"SIGHUP"}]}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","events":[{"type":"jump","at_ms":0}]}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","events":[{"type":"resize","at_ms":0,"columns":10,"rows":10,"x":1}]}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","filesystem_roots":["rel"]}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","limits":[]}`,
		`{"approved":true,"executable":"/bin/echo","working_directory":"/tmp","checkpoints":[{"name":"x"}]}`,
	}
	for _, doc := range valid {
		var v any
		json.Unmarshal([]byte(doc), &v)
		if err := s.Validate(v); err != nil {
			t.Errorf("schema rejects a valid scenario %s: %v", doc, err)
		}
		if _, issues := capture.ParseScenario([]byte(doc)); len(issues) > 0 {
			t.Errorf("parser rejects a valid scenario %s: %v", doc, issues)
		}
	}
	for _, doc := range broken {
		var v any
		json.Unmarshal([]byte(doc), &v)
		if err := s.Validate(v); err == nil {
			t.Errorf("schema accepts a broken scenario %s", doc)
		}
		if _, issues := capture.ParseScenario([]byte(doc)); len(issues) == 0 {
			t.Errorf("parser accepts a broken scenario %s", doc)
		}
	}
}

// capture_process_scenario publishes exactly the docs/schemas document.
func TestMCPPublishesScenarioSchema(t *testing.T) {
	ts := startServer(t)
	_, cs := connectAgent(t, ts, "schema")
	tools := listTools(t, cs)
	want := publishedSchema("capture-scenario.schema.json")
	for _, tl := range tools.Tools {
		if tl.Name != "capture_process_scenario" {
			continue
		}
		var got map[string]any
		json.Unmarshal(schemaJSON(tl.InputSchema), &got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("published input schema differs from docs/schemas:\n%s", schemaJSON(tl.InputSchema))
		}
		return
	}
	t.Fatal("no capture_process_scenario tool")
}

// The published replay run schema (its events in full) and ParseRun agree
// on a corpus of runs.
func TestReplayRunSchemaMatchesParser(t *testing.T) {
	s := compilePublished(t, "replay-run.schema.json")
	m := `{"initial_state":"a","states":[{"name":"a","terminal":true}],"transitions":[],"max_transitions":1}`
	if _, issues := replay.ParseRun([]byte(`{"machine":` + m + `,"events":[]}`)); len(issues) > 0 {
		t.Fatalf("the corpus machine is invalid: %v", issues)
	}
	valid := []string{
		`[]`,
		`[{"type":"http_request","method":"GET","path":"/x?y=1","headers":{"Accept":"text/plain"},"body":null,"at_ms":5}]`,
		`[{"type":"http_request","method":"POST","path":"/","body":"hi","connection":"c1"},{"type":"http_request","method":"GET","path":"/again","connection":"c1","at_ms":7}]`,
		`[{"type":"websocket_connect","connection":"ws-1","path":"/socket"},{"type":"websocket_message","connection":"ws-1","body":"ping","at_ms":3}]`,
	}
	broken := []string{
		`{}`,
		`[{"type":"http_request","path":"/"}]`,
		`[{"type":"http_request","method":"get","path":"/"}]`,
		`[{"type":"http_request","method":"GET","path":"x"}]`,
		`[{"type":"http_request","method":"GET","path":"/a b"}]`,
		`[{"type":"http_request","method":"GET","path":"/","extra":1}]`,
		`[{"type":"http_request","method":"GET","path":"/","headers":{"bad header":"x"}}]`,
		`[{"type":"http_request","method":"GET","path":"/","headers":{"A":1}}]`,
		`[{"type":"http_request","method":"GET","path":"/","at_ms":-1}]`,
		`[{"type":"websocket_connect","path":"/s"}]`,
		`[{"type":"websocket_message","connection":"c"}]`,
		`[{"type":"websocket_message","connection":"c","body":null}]`,
		`[{"type":"teleport"}]`,
		`[{"type":"websocket_connect","connection":"-bad","path":"/s"}]`,
	}
	check := func(events string, want bool) {
		t.Helper()
		doc := `{"machine":` + m + `,"events":` + events + `}`
		var v any
		json.Unmarshal([]byte(doc), &v)
		schemaOK := s.Validate(v) == nil
		_, issues := replay.ParseRun([]byte(doc))
		if schemaOK != want || (len(issues) == 0) != want {
			t.Errorf("events %s: schema accepts %v, parser issues %v; want valid %v", events, schemaOK, issues, want)
		}
	}
	for _, e := range valid {
		check(e, true)
	}
	for _, e := range broken {
		check(e, false)
	}
}

// compare_process_captures publishes the trace-spec schema as its
// trace_spec argument: compiled as the tool's whole input schema (what a
// client does), it accepts every valid docs/examples/trace-spec document
// and refuses the structurally broken ones, as the parser does.
func TestMCPPublishesTraceSpecSchema(t *testing.T) {
	ts := startServer(t)
	_, cs := connectAgent(t, ts, "trace-schema")
	tools := listTools(t, cs)
	var raw json.RawMessage
	for _, tl := range tools.Tools {
		if tl.Name == "compare_process_captures" {
			raw = schemaJSON(tl.InputSchema)
		}
	}
	if raw == nil {
		t.Fatal("no compare_process_captures tool")
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource("compare.json", bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("compare.json")
	if err != nil {
		t.Fatalf("the published input schema does not compile: %v\n%s", err, raw)
	}
	files, _ := filepath.Glob(filepath.Join("..", "docs", "examples", "trace-spec", "*.json"))
	if len(files) < 3 {
		t.Fatalf("%d trace-spec examples", len(files))
	}
	structural := map[string]bool{"missing_field": true, "unknown_field": true, "wrong_type": true, "unsupported_version": true, "out_of_range": true}
	const id = "ev_0000000000000000000000000000000000000000000000000000000000000000"
	for _, f := range files {
		spec, _ := os.ReadFile(f)
		var sv any
		if json.Unmarshal(spec, &sv) != nil {
			continue // invalid JSON never reaches a schema
		}
		args := map[string]any{"left_evidence_id": id, "right_evidence_id": id, "trace_spec": sv}
		_, perr := compare.ParseTraceSpec(spec)
		verr := s.Validate(args)
		base := filepath.Base(f)
		code := strings.TrimSuffix(strings.TrimPrefix(base, "broken-"), ".json")
		switch {
		case strings.HasPrefix(base, "valid-") && (perr != nil || verr != nil):
			t.Errorf("%s: parser %v, schema %v; both must accept it", base, perr, verr)
		case strings.HasPrefix(base, "broken-") && perr == nil:
			t.Errorf("%s: the parser accepts it", base)
		case structural[code] && verr == nil:
			t.Errorf("%s: the published schema accepts it", base)
		}
	}
}

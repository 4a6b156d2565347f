package app

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/docs"
)

func compilePublished(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	b, err := docs.Schemas.ReadFile("schemas/" + file)
	if err != nil {
		t.Fatal(err)
	}
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
	_, tok := addAgent(t, ts, "schema")
	cs, err := mcpClient(t, ts, tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
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

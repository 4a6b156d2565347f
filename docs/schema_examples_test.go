package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// TestExamplesMatchSchemas checks each published JSON Schema,
// docs/schemas/NAME.schema.json, against the parser of its format on every
// example of docs/examples/NAME/ (the MCP tools publish those schemas as
// their input schemas): every valid example is accepted by both, and every
// broken one is refused by the parser and by the schema, unless its defect
// is one a JSON Schema cannot express (beyondSchema: document rules below
// the JSON value, and rules relating one part of a document to another).
// Schemas without an examples folder are reported, not skipped silently.
func TestExamplesMatchSchemas(t *testing.T) {
	schemas, err := filepath.Glob(filepath.Join("schemas", "*.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sf := range schemas {
		name := strings.TrimSuffix(filepath.Base(sf), ".schema.json")
		examples, _ := filepath.Glob(filepath.Join("examples", name, "*.json"))
		if len(examples) == 0 {
			t.Errorf("%s: no examples under docs/examples/%s/", sf, name)
			continue
		}
		parse := exampleParsers[name]
		schema, err := compileFile(t, filepath.Base(sf))
		if err != nil {
			t.Errorf("%s: does not compile: %v", sf, err)
			continue
		}
		bundled, err := compileBundled(filepath.Base(sf))
		if err != nil {
			t.Errorf("%s: bundled, does not compile: %v", sf, err)
			continue
		}
		for _, f := range examples {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			base := filepath.Base(f)
			valid := strings.HasPrefix(base, "valid-")
			stem := strings.TrimSuffix(strings.TrimPrefix(base, "broken-"), ".json")
			code, _, _ := strings.Cut(stem, "--")
			beyond := beyondSchema[name][stem] || beyondSchema[name][code]
			parserOK := len(parse(data)) == 0
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var v any
			schemaErr := dec.Decode(&v)
			if schemaErr == nil {
				schemaErr = schema.Validate(v)
				if bErr := bundled.Validate(v); (bErr == nil) != (schemaErr == nil) {
					t.Errorf("%s: %s refuses it: %v, but bundled: %v", f, sf, schemaErr, bErr)
				}
			}
			switch {
			case valid && (!parserOK || schemaErr != nil):
				t.Errorf("%s: a valid example: parser accepts %v, %s: %v", f, parserOK, sf, schemaErr)
			case !valid && parserOK:
				t.Errorf("%s: the parser accepts a broken example", f)
			case !valid && schemaErr == nil && !beyond && !documentRules[code]:
				t.Errorf("%s: %s accepts it, but %s is a rule the schema can state", f, sf, stem)
			case !valid && schemaErr != nil && beyond:
				t.Errorf("%s: %s refuses it although %s is listed as beyond a schema: remove it from beyondSchema", f, sf, stem)
			}
		}
	}
}

// documentRules are the codes of every format for defects below the JSON
// value a schema sees (bytes, syntax, repeated names, numbers).
var documentRules = set("invalid_json", "invalid_utf8", "too_large", "duplicate_key", "trailing_data", "truncated_json", "bom", "too_deep", "invalid_string", "inexact_number", "too_many_issues")

// beyondSchema are, per format, the codes (or CODE--detail example
// stems) of rules that relate one part of
// a document to another (uniqueness of names inside objects, references,
// graph properties, sums), which a JSON Schema cannot state; the parser
// checks them, and the schema's description says so.
var beyondSchema = map[string]map[string]bool{
	// invalid_name--transport-header: a transport header set by the
	// machine inside, which only the capture refuses (the replay machine
	// format allows it).
	"capture-scenario": set("after_timeout", "conflict", "deadline_order", "duplicate_entry", "invalid_name--transport-header",
		"invalid_pattern", "missing_secret", "not_sorted"),
	"replay-machine": set("ambiguous_transition", "duplicate_entry", "sensitive_not_string", "terminal_has_transitions",
		"uncaptured_variable", "unknown_state", "unreachable_state", "unresolved_action_path"),
	// refused_source, refused_selector: the format accepts them; the
	// capture's preflight refuses what this engine cannot serve.
	"reactive-scenario": set("ambiguous_transition", "dead_end_state", "deadline_order", "refused_selector", "refused_source",
		"unknown_checkpoint", "unknown_state", "unreachable_state"),
	"replay-run": set("connection_conflict", "not_sorted", "sensitive_captures_exceeded"),
	"trace-spec": set("cycle", "duplicate_event_id", "duplicate_variant", "duplicate_variant_id", "ignored_field_in_exact",
		"inconsistent_ignore_fields", "not_before_conflict", "ordered_and_unordered", "overlapping_predicates", "prefix_conflict",
		"repeated_pair", "self_edge", "suffix_conflict", "unknown_reference", "unrelated_pair", "variant_cardinality"),
}

func set(codes ...string) map[string]bool {
	m := map[string]bool{}
	for _, c := range codes {
		m[c] = true
	}
	return m
}

// compileFile compiles schemas/file as published, with every other
// schema file registered under its $id, so references between files
// resolve as a client that fetches them would resolve them.
func compileFile(t *testing.T, file string) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	all, _ := filepath.Glob(filepath.Join("schemas", "*.schema.json"))
	id := ""
	for _, f := range all {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			ID string `json:"$id"`
		}
		if err := json.Unmarshal(raw, &d); err != nil || d.ID == "" {
			t.Fatalf("%s: no $id (%v)", f, err)
		}
		if err := c.AddResource(d.ID, bytes.NewReader(raw)); err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == file {
			id = d.ID
		}
	}
	return c.Compile(id)
}

// compileBundled compiles what Bundled makes of file, on its own.
func compileBundled(file string) (*jsonschema.Schema, error) {
	doc, err := Bundled(file)
	if err != nil {
		return nil, err
	}
	raw, _ := json.Marshal(doc)
	if regexpFileRef.Match(raw) {
		return nil, fmt.Errorf("a reference to a file is left")
	}
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	if err := c.AddResource("bundled.json", bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return c.Compile("bundled.json")
}

// Bundled leaves no reference to another file, and refers to a format
// used inside another through one copy of that format's own file.
func TestBundledSchemasAreSelfContained(t *testing.T) {
	for _, e := range []struct {
		file     string
		included []string
	}{
		{"capture-scenario.schema.json", []string{"replay_machine", "reactive_scenario"}},
		{"replay-run.schema.json", []string{"replay_machine"}},
		{"trace-spec.schema.json", nil},
	} {
		doc, err := Bundled(e.file)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(doc)
		if regexpFileRef.Match(raw) {
			t.Errorf("%s: a file reference is left in the bundle", e.file)
		}
		defs, _ := doc["$defs"].(map[string]any)
		for _, name := range e.included {
			own, err := readSchema(strings.ReplaceAll(name, "_", "-") + ".schema.json")
			if err != nil {
				t.Fatal(err)
			}
			for k := range own["$defs"].(map[string]any) {
				if defs[k] == nil {
					t.Errorf("%s: bundle lacks %s", e.file, k)
				}
			}
			if defs[name] == nil || own["properties"] == nil || !reflect.DeepEqual(defs[name].(map[string]any)["required"], own["required"]) {
				t.Errorf("%s: bundle lacks %s", e.file, name)
			}
		}
	}
	if _, err := Bundled("no-such.schema.json"); err == nil {
		t.Error("a missing file bundles")
	}
}

var regexpFileRef = regexp.MustCompile(`"\$ref":"[^"#]+\.schema\.json"`)

package docs

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		schema, err := c.Compile(sf)
		if err != nil {
			t.Errorf("%s: does not compile: %v", sf, err)
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

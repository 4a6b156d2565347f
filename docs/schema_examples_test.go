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

// TestExamplesMatchSchemas validates every valid example of a format
// against that format's published JSON Schema, docs/schemas/NAME.schema.json
// for docs/examples/NAME/ (the MCP tools publish those schemas as their
// input schemas, so a valid document must never be refused by them). A
// schema cannot express every rule its parser checks, so broken examples
// are not required to fail it. Schemas without an examples folder are
// reported, not skipped silently.
//
// knownSchemaGaps lists valid examples a published schema refuses today
// although the parser accepts them: a defect of the schema, kept visible
// here (the test fails if such an example starts passing, so the entry is
// removed, and fails for any refusal not listed).
var knownSchemaGaps = map[string]string{
	// The parser takes "reactive": null (the default, written out); the
	// schema types reactive as an object only, so an MCP client that
	// validates against it would refuse a valid scenario.
	"examples/capture-scenario/valid-interactive.json": "'/reactive' does not validate",
}

func TestExamplesMatchSchemas(t *testing.T) {
	schemas, err := filepath.Glob(filepath.Join("schemas", "*.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sf := range schemas {
		name := strings.TrimSuffix(filepath.Base(sf), ".schema.json")
		valid, _ := filepath.Glob(filepath.Join("examples", name, "valid-*.json"))
		if len(valid) == 0 {
			t.Logf("%s: no examples under docs/examples/%s/", sf, name)
			continue
		}
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		schema, err := c.Compile(sf)
		if err != nil {
			t.Errorf("%s: does not compile: %v", sf, err)
			continue
		}
		for _, f := range valid {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			err = schema.Validate(v)
			gap, known := knownSchemaGaps[filepath.ToSlash(f)]
			switch {
			case err != nil && known && strings.Contains(err.Error(), gap):
				t.Logf("KNOWN SCHEMA GAP: %s: its parser accepts it, but %s refuses it: %v", f, sf, err)
			case err != nil:
				t.Errorf("%s: its parser accepts it, but %s refuses it: %v", f, sf, err)
			case known:
				t.Errorf("%s: %s now accepts it; remove it from knownSchemaGaps", f, sf)
			}
		}
	}
}

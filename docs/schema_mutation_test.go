package docs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemasAcceptWhatParsersAccept mutates every valid example of every
// format with a published schema, one member at a time (left out, null,
// an integer one either side and far past its value, an empty string or
// array, a string made long), and checks that the schema never refuses a
// document the format's parser accepts: an MCP client that validates
// against the published schema must never refuse valid input.
func TestSchemasAcceptWhatParsersAccept(t *testing.T) {
	schemas, _ := filepath.Glob(filepath.Join("schemas", "*.schema.json"))
	for _, sf := range schemas {
		name := strings.TrimSuffix(filepath.Base(sf), ".schema.json")
		parse := exampleParsers[name]
		schema, err := compileFile(t, filepath.Base(sf))
		if err != nil {
			t.Fatal(err)
		}
		valid, _ := filepath.Glob(filepath.Join("examples", name, "valid-*.json"))
		tried, accepted := 0, 0
		for _, f := range valid {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			root := decode(t, data)
			for _, m := range mutations(root, "$") {
				doc, _ := json.Marshal(m.doc)
				tried++
				if len(parse(doc)) > 0 {
					continue
				}
				accepted++
				if err := schema.Validate(decode(t, doc)); err != nil {
					t.Errorf("%s, %s: the parser accepts it, %s refuses it: %v", f, m.what, sf, err)
				}
			}
		}
		t.Logf("%s: %d mutations, %d accepted by the parser", name, tried, accepted)
	}
}

func decode(t *testing.T, b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

type mutation struct {
	what string
	doc  any
}

// mutations returns copies of root with one value below it changed.
func mutations(root any, path string) []mutation {
	var out []mutation
	var walk func(v any, at string, set func(any) any)
	walk = func(v any, at string, set func(any) any) {
		add := func(what string, nv any) { out = append(out, mutation{at + " " + what, set(nv)}) }
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				k, e := k, e
				child := func(nv any) any {
					cp := map[string]any{}
					for kk, vv := range x {
						cp[kk] = vv
					}
					if nv == deleted {
						delete(cp, k)
					} else {
						cp[k] = nv
					}
					return set(cp)
				}
				walk(e, at+"."+k, child)
				out = append(out, mutation{at + "." + k + " left out", child(deleted)})
			}
		case []any:
			add("empty", []any{})
			for i, e := range x {
				i := i
				walk(e, fmt.Sprintf("%s[%d]", at, i), func(nv any) any {
					cp := append([]any(nil), x...)
					cp[i] = nv
					return set(cp)
				})
			}
		case json.Number:
			if n, err := x.Int64(); err == nil {
				for _, d := range []int64{-1, 1, 1000000} {
					add(fmt.Sprintf("%+d", d), json.Number(fmt.Sprint(n+d)))
				}
			}
		case string:
			add("empty", "")
			add("long", strings.Repeat("a", 70))
		}
		add("null", nil)
	}
	walk(root, path, func(nv any) any { return nv })
	return out
}

var deleted = &struct{ _ byte }{}

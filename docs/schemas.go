// Package docs holds the documents the project publishes with the code:
// the JSON Schemas of its file formats (schemas/), which the MCP tools
// publish as their input schemas and which tests check against the
// parsers.
package docs

import (
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// Schemas are the published JSON Schemas, by file name under schemas/.
//
//go:embed schemas/*.schema.json
var Schemas embed.FS

// Bundled returns the schema in schemas/file as one self-contained
// document: every reference to another schema file ({"$ref":
// "replay-machine.schema.json"}) is replaced by a reference to that
// document, copied under "$defs" (its name without ".schema.json", with
// "-" as "_") without its "$schema", "$id" and "title", and the copied
// document's own definitions are copied beside it. A format used inside
// another is so written once (its own file) and still published whole to
// clients that cannot fetch a second document. The definitions of a
// referenced file must be named after it ("replay_machine.…"), so they
// never clash with the host's; Bundled reports a clash, a missing file or
// a cycle as an error.
func Bundled(file string) (map[string]any, error) {
	doc, err := readSchema(file)
	if err != nil {
		return nil, err
	}
	defs, _ := doc["$defs"].(map[string]any)
	if defs == nil {
		defs = map[string]any{}
	}
	b := &bundler{defs: defs, done: map[string]bool{}, active: map[string]bool{file: true}}
	if err := b.rewrite(doc); err != nil {
		return nil, fmt.Errorf("schemas/%s: %w", file, err)
	}
	if len(defs) > 0 {
		doc["$defs"] = defs
	}
	return doc, nil
}

func readSchema(file string) (map[string]any, error) {
	raw, err := Schemas.ReadFile(path.Join("schemas", file))
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("schemas/%s: %w", file, err)
	}
	return doc, nil
}

type bundler struct {
	defs   map[string]any
	done   map[string]bool // files already copied into defs
	active map[string]bool // files being copied (a cycle check)
}

// rewrite replaces, below v, each reference to another schema file.
func (b *bundler) rewrite(v any) error {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && strings.HasSuffix(ref, ".schema.json") && !strings.Contains(ref, "/") {
			name, err := b.include(ref)
			if err != nil {
				return err
			}
			x["$ref"] = "#/$defs/" + name
		}
		for k, e := range x {
			if k == "$defs" {
				continue // the host's own definitions are rewritten by the loop over defs
			}
			if err := b.rewrite(e); err != nil {
				return err
			}
		}
		if defs, ok := x["$defs"].(map[string]any); ok {
			for _, e := range defs {
				if err := b.rewrite(e); err != nil {
					return err
				}
			}
		}
	case []any:
		for _, e := range x {
			if err := b.rewrite(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// include copies the schema file ref into the definitions once and
// returns the name it is defined under.
func (b *bundler) include(ref string) (string, error) {
	name := strings.ReplaceAll(strings.TrimSuffix(ref, ".schema.json"), "-", "_")
	if b.done[ref] {
		return name, nil
	}
	if b.active[ref] {
		return "", fmt.Errorf("%s refers back to itself", ref)
	}
	b.active[ref] = true
	defer delete(b.active, ref)
	doc, err := readSchema(ref)
	if err != nil {
		return "", err
	}
	own, _ := doc["$defs"].(map[string]any)
	for _, k := range []string{"$schema", "$id", "$defs", "title"} {
		delete(doc, k)
	}
	if err := b.rewrite(doc); err != nil {
		return "", err
	}
	if _, clash := b.defs[name]; clash {
		return "", fmt.Errorf("definition %q already exists", name)
	}
	b.defs[name] = doc
	for k, v := range own {
		if !strings.HasPrefix(k, name+".") {
			return "", fmt.Errorf("%s: definition %q is not named %s.…", ref, k, name)
		}
		if _, clash := b.defs[k]; clash {
			return "", fmt.Errorf("definition %q already exists", k)
		}
		if err := b.rewrite(v); err != nil {
			return "", err
		}
		b.defs[k] = v
	}
	b.done[ref] = true
	return name, nil
}

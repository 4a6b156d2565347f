package bundle

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// schemaTypes are the JSON Schema types the subset admits.
var schemaTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

// schemaKeywords maps each admitted keyword to the types it applies to
// ("" = any type).
var schemaKeywords = map[string]string{
	"type": "", "enum": "", "description": "", "title": "", "anyOf": "",
	"properties": "object", "required": "object", "additionalProperties": "object",
	"items": "array", "minItems": "array", "maxItems": "array",
	"minLength": "string", "maxLength": "string",
	"minimum": "number integer", "maximum": "number integer",
}

// CheckSchema decides whether v, found at path, is inside the bounded
// schema subset: only the admitted keywords, a single explicit type on
// every node (or anyOf with 2–4 branches and nothing beside it), an
// explicit properties map on objects, items on arrays, boolean
// additionalProperties, scalar enums, sane bounds, no "__proto__" key, at
// most MaxDepth levels and MaxNodes values. When inputRoot is set the root
// must be an explicit object type. Every other keyword is rejected with its
// path, never ignored. At most MaxIssues issues are returned.
func CheckSchema(v *Value, path string, inputRoot bool) []Issue {
	var c collector
	if d, n := measure(v, 1); d > MaxDepth {
		c.add("too_deep", path, fmt.Sprintf("schema nesting is %d levels; the limit is %d", d, MaxDepth))
		return c.issues
	} else if n > MaxNodes {
		c.add("too_many_nodes", path, fmt.Sprintf("schema has %d JSON values; the limit is %d", n, MaxNodes))
		return c.issues
	}
	if inputRoot {
		if v.Kind != Object || get(v, "anyOf") != nil || get(v, "type") == nil || get(v, "type").Kind != String || get(v, "type").Str != "object" {
			c.add("root_not_object", path, `the input schema's root must be an explicit {"type": "object"}`)
		}
	}
	checkSchemaNode(&c, v, path)
	return c.issues
}

// measure returns the depth and value count of v (v itself at depth d).
func measure(v *Value, d int) (depth, nodes int) {
	depth, nodes = d, 1
	kids := v.Elems
	kids = append(kids[:len(kids):len(kids)], v.Vals...)
	for _, k := range kids {
		kd, kn := measure(k, d+1)
		if kd > depth {
			depth = kd
		}
		nodes += kn
	}
	return depth, nodes
}

func checkSchemaNode(c *collector, v *Value, path string) {
	if v.Kind != Object {
		c.add("schema_not_object", path, "a schema must be a JSON object")
		return
	}
	for _, key := range v.Keys {
		if _, ok := schemaKeywords[key]; !ok {
			c.add("unsupported_keyword", JoinPath(path, key), fmt.Sprintf("keyword %q is outside the supported schema subset", key))
		}
	}
	for _, k := range []string{"description", "title"} {
		if d := get(v, k); d != nil && d.Kind != String {
			c.add("wrong_type", JoinPath(path, k), k+" must be a string")
		}
	}
	if any := get(v, "anyOf"); any != nil {
		for _, key := range v.Keys {
			if key != "anyOf" {
				c.add("anyof_sibling", JoinPath(path, key), fmt.Sprintf("%q is not allowed beside anyOf; put it inside each branch", key))
			}
		}
		ap := JoinPath(path, "anyOf")
		if any.Kind != Array || len(any.Elems) < 2 || len(any.Elems) > 4 {
			c.add("anyof_branches", ap, "anyOf must be an array of 2 to 4 schemas")
			return
		}
		for i, b := range any.Elems {
			checkSchemaNode(c, b, fmt.Sprintf("%s[%d]", ap, i))
		}
		return
	}
	t := get(v, "type")
	if t == nil {
		c.add("missing_type", path, `every schema needs a "type" (or anyOf)`)
		return
	}
	if t.Kind != String || !schemaTypes[t.Str] {
		c.add("invalid_type", JoinPath(path, "type"), fmt.Sprintf("type must be one of object, array, string, number, integer, boolean, null (a single string), got %s", literal(t)))
		return
	}
	typ := t.Str
	for _, key := range v.Keys {
		if applies, ok := schemaKeywords[key]; ok && applies != "" && !contains(strings.Fields(applies), typ) {
			c.add("keyword_not_applicable", JoinPath(path, key), fmt.Sprintf("%q does not apply to type %q", key, typ))
		}
	}
	if e := get(v, "enum"); e != nil {
		checkEnum(c, e, JoinPath(path, "enum"))
	}
	switch typ {
	case "object":
		checkObjectSchema(c, v, path)
	case "array":
		items := get(v, "items")
		if items == nil {
			c.add("missing_items", path, `array schemas must declare "items"`)
		} else {
			checkSchemaNode(c, items, JoinPath(path, "items"))
		}
		checkCountBounds(c, v, path, "minItems", "maxItems")
	case "string":
		checkCountBounds(c, v, path, "minLength", "maxLength")
	case "number", "integer":
		checkNumberBounds(c, v, path)
	}
}

func checkObjectSchema(c *collector, v *Value, path string) {
	props := get(v, "properties")
	declared := map[string]bool{}
	switch {
	case props == nil:
		c.add("missing_properties", path, `object schemas must declare an explicit "properties" map (it may be empty)`)
	case props.Kind != Object:
		c.add("wrong_type", JoinPath(path, "properties"), "properties must be an object mapping names to schemas")
	default:
		pp := JoinPath(path, "properties")
		for i, key := range props.Keys {
			if key == protoKey {
				c.add("forbidden_key", JoinPath(pp, key), `the key "__proto__" is not allowed`)
				continue
			}
			declared[key] = true
			checkSchemaNode(c, props.Vals[i], JoinPath(pp, key))
		}
	}
	if ap := get(v, "additionalProperties"); ap != nil && ap.Kind != Bool {
		c.add("invalid_additional_properties", JoinPath(path, "additionalProperties"), "additionalProperties must be true or false")
	}
	if r := get(v, "required"); r != nil {
		rp := JoinPath(path, "required")
		if r.Kind != Array {
			c.add("invalid_required", rp, "required must be an array of property names")
			return
		}
		seen := map[string]bool{}
		for i, it := range r.Elems {
			ip := fmt.Sprintf("%s[%d]", rp, i)
			switch {
			case it.Kind != String:
				c.add("invalid_required", ip, "required entries must be strings")
			case seen[it.Str]:
				c.add("invalid_required", ip, fmt.Sprintf("%q is listed twice", it.Str))
			case props != nil && props.Kind == Object && !declared[it.Str]:
				c.add("invalid_required", ip, fmt.Sprintf("%q is required but not declared in properties", it.Str))
			}
			if it.Kind == String {
				seen[it.Str] = true
			}
		}
	}
}

func checkEnum(c *collector, e *Value, path string) {
	if e.Kind != Array || len(e.Elems) == 0 {
		c.add("invalid_enum", path, "enum must be a non-empty array")
		return
	}
	seen := map[string]bool{}
	for i, it := range e.Elems {
		ip := fmt.Sprintf("%s[%d]", path, i)
		if it.Kind == Array || it.Kind == Object {
			c.add("invalid_enum", ip, "enum values must be scalars (string, number, boolean or null)")
			continue
		}
		b, _ := it.MarshalJSON()
		if seen[string(b)] {
			c.add("invalid_enum", ip, fmt.Sprintf("enum value %s is listed twice", b))
		}
		seen[string(b)] = true
	}
}

func checkCountBounds(c *collector, v *Value, path, lo, hi string) {
	var vals [2]int64
	var ok [2]bool
	for i, k := range []string{lo, hi} {
		b := get(v, k)
		if b == nil {
			continue
		}
		n, isInt := intValue(b)
		if !isInt || n < 0 {
			c.add("invalid_bound", JoinPath(path, k), k+" must be a non-negative integer")
			continue
		}
		vals[i], ok[i] = n, true
	}
	if ok[0] && ok[1] && vals[0] > vals[1] {
		c.add("invalid_bound", JoinPath(path, lo), fmt.Sprintf("%s %d is greater than %s %d", lo, vals[0], hi, vals[1]))
	}
}

func checkNumberBounds(c *collector, v *Value, path string) {
	var vals [2]float64
	var ok [2]bool
	for i, k := range []string{"minimum", "maximum"} {
		b := get(v, k)
		if b == nil {
			continue
		}
		if b.Kind != Number {
			c.add("invalid_bound", JoinPath(path, k), k+" must be a number")
			continue
		}
		f, err := json.Number(b.Str).Float64()
		if err != nil {
			c.add("invalid_bound", JoinPath(path, k), k+" is not a finite number")
			continue
		}
		vals[i], ok[i] = f, true
	}
	if ok[0] && ok[1] && vals[0] > vals[1] {
		c.add("invalid_bound", JoinPath(path, "minimum"), "minimum is greater than maximum")
	}
}

// sortIssues orders issues by path then code, for deterministic output.
func sortIssues(is []Issue) {
	sort.SliceStable(is, func(i, j int) bool {
		if is[i].Path != is[j].Path {
			return is[i].Path < is[j].Path
		}
		return is[i].Code < is[j].Code
	})
}

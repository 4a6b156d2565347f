package bundle

import (
	"fmt"
	"strings"
	"testing"
)

func parse(t testing.TB, doc string) *Value {
	t.Helper()
	v, iss := ParseJSON([]byte(doc))
	if iss != nil {
		t.Fatalf("parse %s: %v", doc, iss)
	}
	return v
}

func checkDoc(t *testing.T, doc string, input bool) []Issue {
	t.Helper()
	return CheckSchema(parse(t, doc), "$", input)
}

func TestSchemaSubsetAdmits(t *testing.T) {
	for _, doc := range []string{
		`{"type":"object","properties":{}}`,
		`{"type":"object","title":"T","description":"D","properties":{"a":{"type":"string","minLength":0,"maxLength":3,"enum":["x","y"]},"b":{"type":"integer","minimum":-1,"maximum":1},"c":{"type":"array","items":{"type":"boolean"},"minItems":1,"maxItems":1},"d":{"type":"null"},"e":{"type":"number"}},"required":["a"],"additionalProperties":false}`,
		`{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
		`{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"null"},{"type":"number"},{"type":"boolean"}]}}}`,
	} {
		if is := checkDoc(t, doc, true); len(is) > 0 {
			t.Errorf("%s: %v", doc, is)
		}
		if _, is := CompileSchema(parse(t, doc), true); len(is) > 0 {
			t.Errorf("compile %s: %v", doc, is)
		}
	}
}

func TestSchemaSubsetRejectsEachRule(t *testing.T) {
	obj := func(prop string) string { return `{"type":"object","properties":{"p":` + prop + `}}` }
	for _, c := range []struct {
		doc, code, path string
	}{
		{`{"type":"string"}`, "root_not_object", "$"},
		{`{"anyOf":[{"type":"object","properties":{}},{"type":"object","properties":{}}]}`, "root_not_object", "$"},
		{`{"type":"object"}`, "missing_properties", "$"},
		{`{"type":"object","properties":[]}`, "wrong_type", "$.properties"},
		{obj(`{"type":"array"}`), "missing_items", "$.properties.p"},
		{obj(`{"type":"array","items":[{"type":"string"}]}`), "schema_not_object", "$.properties.p.items"},
		{obj(`{"type":"string","pattern":"^a"}`), "unsupported_keyword", "$.properties.p.pattern"},
		{obj(`{"type":"string","format":"email"}`), "unsupported_keyword", "$.properties.p.format"},
		{obj(`{"$ref":"#/x"}`), "unsupported_keyword", `$.properties.p["$ref"]`},
		{obj(`{"oneOf":[{"type":"string"},{"type":"null"}]}`), "unsupported_keyword", "$.properties.p.oneOf"},
		{obj(`{"allOf":[{"type":"string"}]}`), "unsupported_keyword", "$.properties.p.allOf"},
		{obj(`{"not":{"type":"string"}}`), "unsupported_keyword", "$.properties.p.not"},
		{obj(`{"const":1}`), "unsupported_keyword", "$.properties.p.const"},
		{obj(`{"type":"object","properties":{},"patternProperties":{}}`), "unsupported_keyword", "$.properties.p.patternProperties"},
		{obj(`{"type":["string","null"]}`), "invalid_type", "$.properties.p.type"},
		{obj(`{"type":"date"}`), "invalid_type", "$.properties.p.type"},
		{obj(`{"minLength":1}`), "missing_type", "$.properties.p"},
		{obj(`{"type":"object","properties":{},"additionalProperties":{"type":"string"}}`), "invalid_additional_properties", "$.properties.p.additionalProperties"},
		{obj(`{"type":"string","enum":[{"a":1}]}`), "invalid_enum", "$.properties.p.enum[0]"},
		{obj(`{"type":"string","enum":[]}`), "invalid_enum", "$.properties.p.enum"},
		{obj(`{"type":"string","enum":["a","a"]}`), "invalid_enum", "$.properties.p.enum[1]"},
		{obj(`{"anyOf":[{"type":"string"}]}`), "anyof_branches", "$.properties.p.anyOf"},
		{obj(`{"anyOf":[{"type":"string"},{"type":"null"},{"type":"number"},{"type":"boolean"},{"type":"integer"}]}`), "anyof_branches", "$.properties.p.anyOf"},
		{obj(`{"anyOf":[{"type":"string"},{"type":"null"}],"description":"x"}`), "anyof_sibling", "$.properties.p.description"},
		{obj(`{"anyOf":[{"type":"string"},{"type":"string","pattern":"x"}]}`), "unsupported_keyword", "$.properties.p.anyOf[1].pattern"},
		{obj(`{"type":"string","minLength":-1}`), "invalid_bound", "$.properties.p.minLength"},
		{obj(`{"type":"string","minLength":3,"maxLength":2}`), "invalid_bound", "$.properties.p.minLength"},
		{obj(`{"type":"array","items":{"type":"string"},"minItems":1.5}`), "invalid_bound", "$.properties.p.minItems"},
		{obj(`{"type":"number","minimum":2,"maximum":1}`), "invalid_bound", "$.properties.p.minimum"},
		{obj(`{"type":"number","minimum":"1"}`), "invalid_bound", "$.properties.p.minimum"},
		{obj(`{"type":"string","minimum":1}`), "keyword_not_applicable", "$.properties.p.minimum"},
		{obj(`{"type":"string","items":{"type":"string"}}`), "keyword_not_applicable", "$.properties.p.items"},
		{obj(`{"type":"string","description":3}`), "wrong_type", "$.properties.p.description"},
		{`{"type":"object","properties":{},"required":["x"]}`, "invalid_required", "$.required[0]"},
		{`{"type":"object","properties":{"x":{"type":"string"}},"required":["x","x"]}`, "invalid_required", "$.required[1]"},
		{`{"type":"object","properties":{},"required":"x"}`, "invalid_required", "$.required"},
		{obj(`"string"`), "schema_not_object", "$.properties.p"},
	} {
		is := checkDoc(t, c.doc, true)
		if !hasIssue(is, c.code, c.path) {
			t.Errorf("%s: want %s at %s, got %v", c.doc, c.code, c.path, is)
		}
		if _, cis := CompileSchema(parse(t, c.doc), true); len(cis) == 0 {
			t.Errorf("%s compiled despite issues", c.doc)
		}
	}
}

func TestSchemaProtoKeyRejected(t *testing.T) {
	_, iss := ParseJSON([]byte(`{"type":"object","properties":{"__proto__":{"type":"string"}}}`))
	if iss == nil || iss.Code != "forbidden_key" || iss.Path != "$.properties.__proto__" {
		t.Fatalf("got %v", iss)
	}
	// A Value built without ParseJSON is still checked.
	v := &Value{Kind: Object, Keys: []string{"type", "properties"}, Vals: []*Value{
		{Kind: String, Str: "object"},
		{Kind: Object, Keys: []string{"__proto__"}, Vals: []*Value{{Kind: Object}}},
	}}
	expectIssue(t, CheckSchema(v, "$", true), "forbidden_key", "$.properties.__proto__")
}

// nestedSchema returns an object schema whose values reach exactly depth d
// (the root schema object is at depth 1; each nested property adds two
// levels: "properties" and the property's schema).
func nestedSchema(levels int) string {
	return nestedAround(levels, `{"type":"object","properties":{}}`)
}

func nestedAround(levels int, s string) string {
	for i := 0; i < levels; i++ {
		s = `{"type":"object","properties":{"a":` + s + `}}`
	}
	return s
}

func TestSchemaDepthAndNodeLimits(t *testing.T) {
	// depth(nestedSchema(n)) = 2n + 2: root(1) … innermost properties map.
	at, over := nestedSchema(15), nestedSchema(16) // depths 32 and 34
	if d, _ := measure(parse(t, at), 1); d != MaxDepth {
		t.Fatalf("fixture depth %d", d)
	}
	if is := checkDoc(t, at, true); len(is) > 0 {
		t.Fatalf("depth %d: %v", MaxDepth, is)
	}
	if _, iss := ParseJSON([]byte(over)); iss == nil || iss.Code != "too_deep" {
		t.Fatalf("depth 34 parsed: %v", iss)
	}
	// Depth 33: the innermost schema is an array whose items' type sits one
	// level below the innermost properties map.
	over = nestedAround(15, `{"type":"array","items":{"type":"string"}}`)
	if ov, _ := parseJSON([]byte(over), 64, MaxNodes); ov == nil {
		t.Fatal("fixture does not parse")
	} else if d, _ := measure(ov, 1); d != MaxDepth+1 {
		t.Fatalf("fixture depth %d", d)
	}

	// Nodes: an enum of k strings; schema values = root(1) + type(1) +
	// properties(1) + p(1) + p.type(1) + enum(1) + k.
	enumOf := func(k int) string {
		vals := make([]string, k)
		for i := range vals {
			vals[i] = fmt.Sprintf(`"v%d"`, i)
		}
		return `{"type":"object","properties":{"p":{"type":"string","enum":[` + strings.Join(vals, ",") + `]}}}`
	}
	if is := checkDoc(t, enumOf(MaxNodes-6), true); len(is) > 0 {
		t.Fatalf("%d nodes: %v", MaxNodes, is)
	}
	if _, iss := ParseJSON([]byte(enumOf(MaxNodes - 5))); iss == nil || iss.Code != "too_many_nodes" {
		t.Fatalf("%d nodes parsed: %v", MaxNodes+1, iss)
	}
	// Inside a manifest the schemas get their own limits.
	big := enumOf(MaxNodes - 5)
	m := []byte(`{"schemaVersion":1,"entrypoint":"a.mjs","files":["a.mjs"],"timeoutMs":1000,"maxOutputBytes":1,"outputSchema":{"type":"null"},"inputSchema":` + big + `}`)
	_, is, _ := ParseManifest(m)
	expectIssue(t, is, "too_many_nodes", "$.inputSchema")
	m = []byte(`{"schemaVersion":1,"entrypoint":"a.mjs","files":["a.mjs"],"timeoutMs":1000,"maxOutputBytes":1,"outputSchema":{"type":"null"},"inputSchema":` + over + `}`)
	_, is, _ = ParseManifest(m)
	if len(is) != 1 || is[0].Code != "too_deep" || !strings.HasPrefix(is[0].Path, "$.inputSchema.") {
		t.Fatalf("depth-33 schema inside manifest: %v", is)
	}
	m = []byte(`{"schemaVersion":1,"entrypoint":"a.mjs","files":["a.mjs"],"timeoutMs":1000,"maxOutputBytes":1,"outputSchema":{"type":"null"},"inputSchema":` + nestedSchema(15) + `}`)
	if _, is, _ = ParseManifest(m); len(is) > 0 {
		t.Fatalf("depth-32 schema inside manifest: %v", is)
	}
}

func TestJSONDepthLimitExactly(t *testing.T) {
	at := strings.Repeat("[", MaxDepth-1) + "1" + strings.Repeat("]", MaxDepth-1)
	if _, iss := ParseJSON([]byte(at)); iss != nil {
		t.Fatalf("depth %d: %v", MaxDepth, iss)
	}
	over := strings.Repeat("[", MaxDepth) + "1" + strings.Repeat("]", MaxDepth)
	if _, iss := ParseJSON([]byte(over)); iss == nil || iss.Code != "too_deep" {
		t.Fatalf("depth %d: %v", MaxDepth+1, iss)
	}
	nodes := "[" + strings.TrimSuffix(strings.Repeat("0,", MaxNodes-1), ",") + "]"
	if _, iss := ParseJSON([]byte(nodes)); iss != nil {
		t.Fatalf("%d nodes: %v", MaxNodes, iss)
	}
	if _, iss := ParseJSON([]byte("[0," + nodes[1:])); iss == nil || iss.Code != "too_many_nodes" {
		t.Fatalf("%d nodes: %v", MaxNodes+1, iss)
	}
}

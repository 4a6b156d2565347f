package bundle

import (
	"fmt"
	"strings"
	"testing"
)

func compile(t testing.TB, doc string, input bool) *Schema {
	t.Helper()
	s, is := CompileSchema(parse(t, doc), input)
	if len(is) > 0 {
		t.Fatalf("compile: %v", is)
	}
	return s
}

const factSchema = `{"type":"object","properties":{
	"name":{"type":"string","minLength":2,"maxLength":3},
	"count":{"type":"integer","minimum":0,"maximum":10},
	"tags":{"type":"array","items":{"type":"string"},"maxItems":2},
	"mode":{"type":"string","enum":["a","b"]},
	"strict":{"type":"object","properties":{"x":{"type":"boolean"}},"additionalProperties":false},
	"either":{"anyOf":[{"type":"string"},{"type":"null"}]}
},"required":["name"]}`

func TestValidateInvocation(t *testing.T) {
	s := compile(t, factSchema, true)
	for _, c := range []struct {
		doc, code, path string
	}{
		{`{"name":"ab"}`, "", ""},
		{`{"name":"ab","undeclared":1}`, "", ""}, // no stripping, undeclared allowed
		{`{"name":"😀😀😀"}`, "", ""},               // code points, not bytes
		{`{"name":"😀😀😀😀"}`, "too_long", "$.name"},
		{`{"name":"a"}`, "too_short", "$.name"},
		{`{}`, "missing_property", "$"},
		{`{"name":"ab","count":"5"}`, "type_mismatch", "$.count"}, // no coercion
		{`{"name":"ab","count":1.5}`, "type_mismatch", "$.count"},
		{`{"name":"ab","count":11}`, "above_maximum", "$.count"},
		{`{"name":"ab","count":-1}`, "below_minimum", "$.count"},
		{`{"name":"ab","tags":["a","b","c"]}`, "too_many_items", "$.tags"},
		{`{"name":"ab","tags":[1]}`, "type_mismatch", "$.tags[0]"},
		{`{"name":"ab","mode":"c"}`, "not_in_enum", "$.mode"},
		{`{"name":"ab","strict":{"y":1}}`, "unexpected_property", "$.strict"},
		{`{"name":"ab","either":3}`, "type_mismatch", "$.either"},
		{`[]`, "not_object", "$"},
		{`{"name":"ab"} {}`, "trailing_data", "$"},
		{`{"name":NaN}`, "invalid_json", "$.name"},
		{`{"name":"ab"`, "truncated_json", "$"},
		{"\xef\xbb\xbf{\"name\":\"ab\"}", "bom", "$"},
		{"{\"name\":\"a\xc3\"}", "invalid_utf8", "$"},
		{`{"name":"ab","__proto__":{"x":1}}`, "forbidden_key", "$.__proto__"},
		{`{"name":"ab","name":"cd"}`, "duplicate_key", "$.name"},
	} {
		v, is := ValidateInvocation(s, []byte(c.doc))
		if c.code == "" {
			if len(is) > 0 || v == nil {
				t.Errorf("%s: %v", c.doc, is)
			}
			continue
		}
		if v != nil || !hasIssue(is, c.code, c.path) {
			t.Errorf("%s: want %s at %s, got %v", c.doc, c.code, c.path, is)
		}
	}
}

func TestInvocationSizeLimitExactly(t *testing.T) {
	s := compile(t, `{"type":"object","properties":{"pad":{"type":"string"}}}`, true)
	doc := func(n int) []byte {
		b := []byte(`{"pad":"` + strings.Repeat("x", n-len(`{"pad":""}`)) + `"}`)
		if len(b) != n {
			t.Fatalf("fixture is %d bytes", len(b))
		}
		return b
	}
	if _, is := ValidateInvocation(s, doc(MaxInvocationBytes)); len(is) > 0 {
		t.Fatalf("64 KiB invocation: %v", is)
	}
	if _, is := ValidateInvocation(s, doc(MaxInvocationBytes+1)); !hasIssue(is, "input_too_large", "$") {
		t.Fatalf("64 KiB + 1: %v", is)
	}
}

func TestValidateResult(t *testing.T) {
	s := compile(t, `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`, false)
	out := []byte(`{"ok":true}` + "\n")
	if _, is := ValidateResult(s, out, len(out)); len(is) > 0 {
		t.Fatalf("result at the limit: %v", is)
	}
	if _, is := ValidateResult(s, out, len(out)-1); !hasIssue(is, "output_too_large", "$") {
		t.Fatalf("result one past the limit: %v", is)
	}
	for _, c := range []struct{ doc, code string }{
		{``, "missing_output"},
		{"  \n", "missing_output"},
		{`{"ok":true}{"ok":true}`, "trailing_data"},
		{`{"ok":true}` + "\n" + `{"ok":false}`, "trailing_data"},
		{`{"ok":Infinity}`, "invalid_json"},
		{`{"ok":NaN}`, "invalid_json"},
		{`{"ok":tr`, "truncated_json"},
		{`{"ok":tru}`, "invalid_json"},
		{`{"ok":true`, "truncated_json"},
		{"\xef\xbb\xbf{\"ok\":true}", "bom"},
		{"{\"ok\":\"\xff\"}", "invalid_utf8"},
		{`{"ok":"yes"}`, "type_mismatch"},
		{`{}`, "missing_property"},
	} {
		if _, is := ValidateResult(s, []byte(c.doc), 1000); !hasIssue(is, c.code, "") {
			t.Errorf("%q: want %s, got %v", c.doc, c.code, is)
		}
	}
	scalar := compile(t, `{"type":"integer"}`, false)
	if _, is := ValidateResult(scalar, []byte(" 42 \n"), 100); len(is) > 0 {
		t.Fatalf("scalar result: %v", is)
	}
}

func TestValidationReportsAtMostTwentyIssues(t *testing.T) {
	props := make([]string, 30)
	vals := make([]string, 30)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%02d":{"type":"string"}`, i)
		vals[i] = fmt.Sprintf(`"p%02d":%d`, i, i)
	}
	s := compile(t, `{"type":"object","properties":{`+strings.Join(props, ",")+`}}`, true)
	_, is := ValidateInvocation(s, []byte(`{`+strings.Join(vals, ",")+`}`))
	if len(is) != MaxIssues {
		t.Fatalf("%d issues, want %d", len(is), MaxIssues)
	}
	for _, i := range is {
		if i.Code != "type_mismatch" || !strings.HasPrefix(i.Path, "$.p") {
			t.Fatalf("issue %v", i)
		}
	}
}

// TestDigitMemberPath: an invocation member named with digits is reported
// as a name, never as an array index it is not.
func TestDigitMemberPath(t *testing.T) {
	s := compile(t, `{"type":"object","properties":{"0":{"type":"string"},"l":{"type":"array","items":{"type":"string"}}}}`, true)
	_, is := ValidateInvocation(s, []byte(`{"0":5,"l":["a",7]}`))
	got := map[string]bool{}
	for _, i := range is {
		got[i.Path] = true
	}
	if len(is) != 2 || !got[`$["0"]`] || !got["$.l[1]"] {
		t.Fatalf("issues %v", is)
	}
}

func TestPointerToPath(t *testing.T) {
	doc := parse(t, `{"a":[{"b":1}],"0":{"1":[0,[2]]}}`)
	for in, want := range map[string]string{
		"": "$", "/a": "$.a", "/a/0/b": "$.a[0].b", "/a~1b": `$["a/b"]`, "/x~0y": `$["x~y"]`, "/with space": `$["with space"]`,
		// digits name a member of an object and an element of an array
		"/0": `$["0"]`, "/0/1/1/0": `$["0"]["1"][1][0]`,
	} {
		if got := pointerToPath(doc, in); got != want {
			t.Errorf("pointerToPath(%q) = %s, want %s", in, got, want)
		}
	}
}

package strictjson

import "testing"

// Variant reports each way a union's discriminator can be wrong with its
// own code at its own path, and reads the first member of that name.
func TestCheckerVariant(t *testing.T) {
	for _, c := range []struct {
		doc, want, code, path string
	}{
		{`{"type":"b","x":1}`, "b", "", ""},
		{`{"type":"a","type":"zz"}`, "a", "", ""},
		{`[1]`, "", CodeWrongType, "$.t"},
		{`{"x":1}`, "", CodeMissingField, "$.t.type"},
		{`{"type":7}`, "", CodeWrongType, "$.t.type"},
		{`{"type":"c"}`, "", CodeInvalidVariant, "$.t.type"},
	} {
		var l Collector
		n := Decode([]byte(c.doc), "$", Options{MaxDepth: 4, KeepDuplicates: true}, &l)
		l = Collector{}
		ch := Checker{Issues: &l}
		got, ok := ch.Variant(n, "$.t", "type", "a", "b")
		if c.code == "" {
			if !ok || got != c.want || len(l.List) != 0 {
				t.Errorf("%s: %q %v %+v", c.doc, got, ok, l.List)
			}
			continue
		}
		if ok || got != "" || len(l.List) != 1 || l.List[0].Code != c.code || l.List[0].Path != c.path {
			t.Errorf("%s: %q %v %+v, want %s at %s", c.doc, got, ok, l.List, c.code, c.path)
		}
	}
	var l Collector
	ch := Checker{Issues: &l}
	ch.Variant(Decode([]byte(`{"type":"c"}`), "$", Options{MaxDepth: 4}, &l), "$", "type", "a", "b")
	if len(l.List) != 1 || l.List[0].Message != `"c" is not one of a, b` {
		t.Errorf("message: %+v", l.List)
	}
}

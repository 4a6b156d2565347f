package strictjson

import (
	"strings"
	"testing"
)

func decodeOne(t *testing.T, doc string, opt Options) (*Node, []Issue) {
	t.Helper()
	var l Collector
	n := Decode([]byte(doc), "$", opt, &l)
	return n, l.List
}

func TestCollectorMarkOnOverflow(t *testing.T) {
	for _, n := range []int{5, 6} {
		l := Collector{Max: 5, MarkOnOverflow: true}
		for i := 0; i < n; i++ {
			l.Add("$", CodeInvalidValue, "issue %d", i)
		}
		last := l.List[len(l.List)-1]
		if len(l.List) != 5 || (last.Code == CodeTooManyIssues) != (n > 5) || l.Full() != (n > 5) {
			t.Fatalf("%d issues: kept %+v, full %v", n, l.List, l.Full())
		}
	}
}

func TestDecodeScalarDepth(t *testing.T) {
	for _, scalar := range []bool{false, true} {
		opt := Options{MaxDepth: 2, ScalarDepth: scalar, Wording: Wording{TooDeep: "too deep"}}
		if n, l := decodeOne(t, `[1,[]]`, opt); n == nil {
			t.Fatalf("scalar=%v rejected values at the limit: %+v", scalar, l)
		}
		n, l := decodeOne(t, `[[1]]`, opt)
		if (n == nil) != scalar || scalar && (l[0] != Issue{CodeTooDeep, "$[0][0]", "too deep"}) {
			t.Fatalf("scalar=%v: %v %+v", scalar, n, l)
		}
	}
}

func TestDecodeCodesAndWording(t *testing.T) {
	opt := Options{
		MaxDepth: 8, MaxValues: 4, LiteralNumbers: true, RootObject: true, ForbiddenKeys: []string{"__proto__"},
		Codes: Codes{Truncated: "truncated", Trailing: CodeTrailingData, TooLarge: "too_many"},
		Wording: Wording{Syntax: "bad near %d: %v", EOF: "eof", Trailing: "trailing at %d", DuplicateFormat: "%q twice",
			Forbidden: "%q forbidden", TooLarge: "over %d", NotObject: "want an object"},
	}
	for doc, want := range map[string]Issue{
		`{"a":1e999}`:              {},
		`[1]`:                      {CodeNotObject, "$", "want an object"},
		`{"a":1} x`:                {CodeTrailingData, "$", "trailing at 8"},
		`{"a":`:                    {"truncated", "$.a", "eof"},
		`{"a":[1,2,3]}`:            {"too_many", "$.a[2]", "over 4"},
		`{"a":1,"a":2}`:            {CodeDuplicateKey, "$.a", `"a" twice`},
		`{"x":{"__proto__":null}}`: {CodeForbiddenKey, "$.x.__proto__", `"__proto__" forbidden`},
	} {
		_, l := decodeOne(t, doc, opt)
		if want == (Issue{}) && len(l) == 0 {
			continue
		}
		if len(l) != 1 || l[0] != want {
			t.Errorf("%s: got %+v, want %+v", doc, l, want)
		}
	}
	_, l := decodeOne(t, `{"a" 1}`, opt)
	if len(l) != 1 || l[0].Code != CodeInvalidJSON || l[0].Path != "$.a" || !strings.HasPrefix(l[0].Message, "bad near 5: invalid character") {
		t.Errorf("syntax: %+v", l)
	}
}

func TestDecodeNumbers(t *testing.T) {
	for _, c := range []struct {
		doc  string
		opt  Options
		code string
	}{
		{`1e999`, Options{MaxDepth: 1}, CodeInvalidValue},
		{`1e999`, Options{MaxDepth: 1, ExactNumbers: true}, CodeInexactNumber},
		{`1e999`, Options{MaxDepth: 1, ExactNumbers: true, LiteralNumbers: true}, ""},
		{`9007199254740993`, Options{MaxDepth: 1, ExactNumbers: true}, CodeInexactNumber},
		{`9007199254740993`, Options{MaxDepth: 1}, ""},
	} {
		n, l := decodeOne(t, c.doc, c.opt)
		if got := ""; len(l) > 0 {
			got = l[0].Code
			if got != c.code {
				t.Errorf("%s %+v: %+v", c.doc, c.opt, l)
			}
		} else if c.code != "" || n.Str != c.doc {
			t.Errorf("%s %+v: no issue, node %+v", c.doc, c.opt, n)
		}
	}
}

func TestDecodeSpans(t *testing.T) {
	doc := " {\"a\" : [1, \"x\" ,{\"b\":null}] , \"c\":true } "
	n, l := decodeOne(t, doc, Options{MaxDepth: 8})
	if n == nil {
		t.Fatal(l)
	}
	a, _ := n.Member("a")
	c, _ := n.Member("c")
	for _, s := range []struct {
		n    *Node
		want string
	}{{n, doc[1 : len(doc)-1]}, {a, `[1, "x" ,{"b":null}]`}, {a.Elems[1], `"x"`}, {a.Elems[2], `{"b":null}`}, {c, "true"}} {
		if got := doc[s.n.Off:s.n.End]; got != s.want {
			t.Errorf("span %q, want %q", got, s.want)
		}
	}
}

func TestDecodeTreeDepth(t *testing.T) {
	doc := `{"a":{"b":[1,{"c":"\ud800"}]},"d":[2,2]}`
	n, l := decodeOne(t, doc, Options{MaxDepth: 8, TreeDepth: 2, Surrogates: true})
	if n == nil || len(l) != 1 || l[0].Path != `$.a.b[1].c` {
		t.Fatalf("deeper values are not checked: %+v", l)
	}
	a, _ := n.Member("a")
	d, _ := n.Member("d")
	if len(n.Keys) != 2 || len(a.Keys) != 0 || len(d.Elems) != 0 || doc[a.Off:a.End] != `{"b":[1,{"c":"\ud800"}]}` {
		t.Fatalf("tree below depth 2 kept: %+v %+v", a, d)
	}
	if n, _ := decodeOne(t, doc, Options{MaxDepth: 8}); len(n.Vals[1].Elems) != 2 {
		t.Fatal("TreeDepth 0 does not keep everything")
	}
}

// TestDecodeDefaultWording: a zero Wording gives the shared messages, not
// empty ones.
func TestDecodeDefaultWording(t *testing.T) {
	for doc, want := range map[string]string{
		`{"a":1`:        "unexpected end of input",
		`{"a":1,"a":2}`: "member name appears more than once in this object",
		`{"a":1e400}`:   "number is outside the range of an IEEE-754 double",
	} {
		_, issues := decodeOne(t, doc, Options{MaxDepth: 8})
		if len(issues) == 0 || issues[0].Message != want {
			t.Errorf("%s: %+v, want %q", doc, issues, want)
		}
	}
}

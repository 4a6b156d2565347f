package strictjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCollectorBound(t *testing.T) {
	var l Collector
	for i := 0; i < 150; i++ {
		l.Add("$", CodeInvalidValue, "issue %d", i)
	}
	if len(l.List) != DefaultMaxIssues || l.List[DefaultMaxIssues-1].Code != CodeTooManyIssues {
		t.Fatalf("got %d issues, last %+v", len(l.List), l.List[len(l.List)-1])
	}
	one := Collector{Max: 1}
	one.Add("$.a", CodeInvalidValue, "first")
	one.Add("$.b", CodeInvalidValue, "second")
	if len(one.List) != 1 || one.List[0].Path != "$.a" {
		t.Fatalf("Max 1 kept %+v", one.List)
	}
}

func TestDecodeDuplicatesAndPaths(t *testing.T) {
	doc := []byte(`{"a":{"x-y":1,"x-y":2},"b":[true,null]}`)
	for _, keep := range []bool{false, true} {
		var l Collector
		n := Decode(doc, "$", Options{MaxDepth: 8, KeepDuplicates: keep, Wording: Wording{Duplicate: "dup"}}, &l)
		if n == nil || len(l.List) != 1 || l.List[0].Code != CodeDuplicateKey || l.List[0].Path != `$.a["x-y"]` {
			t.Fatalf("keep=%v: %+v", keep, l.List)
		}
		a, _ := n.Member("a")
		if want := map[bool]int{false: 1, true: 2}[keep]; len(a.Keys) != want {
			t.Fatalf("keep=%v: %d members", keep, len(a.Keys))
		}
		if got := string(n.Raw()); keep && got != string(doc) {
			t.Fatalf("Raw = %s", got)
		}
	}
}

func TestDecodeLimits(t *testing.T) {
	var l Collector
	if Decode([]byte(`[[[1]]]`), "$", Options{MaxDepth: 2}, &l) != nil || l.List[0].Code != CodeTooDeep || l.List[0].Path != "$[0][0]" {
		t.Fatalf("depth: %+v", l.List)
	}
	l = Collector{}
	if Decode([]byte(`[1,2,3]`), "$", Options{MaxDepth: 2, MaxValues: 3}, &l) != nil || l.List[0].Code != CodeTooLarge {
		t.Fatalf("values: %+v", l.List)
	}
}

// TestNodeInterfaceAndMarshal: a Node converts to exactly what encoding/json
// decodes with UseNumber and marshals back in document order with its
// number literals.
func TestNodeInterfaceAndMarshal(t *testing.T) {
	doc := `{"z":[1.50,true,null,"s"],"a":{"b":-0,"c":1e400}}`
	var l Collector
	n := Decode([]byte(doc), "$", Options{MaxDepth: 8, LiteralNumbers: true}, &l)
	if n == nil || !l.Empty() {
		t.Fatalf("decode: %+v", l.List)
	}
	out, err := json.Marshal(n)
	if err != nil || string(out) != doc {
		t.Fatalf("MarshalJSON = %s, %v", out, err)
	}
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if got := n.Interface(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Interface = %#v, want %#v", got, want)
	}
}

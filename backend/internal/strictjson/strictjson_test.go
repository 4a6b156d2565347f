package strictjson

import "testing"

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

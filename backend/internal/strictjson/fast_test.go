package strictjson

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fastOptions are option sets of the package's callers: an Evidence
// envelope's, a scenario's (forbidden keys, scalar depth, a value limit),
// literal numbers, and the zero value with a depth.
var fastOptions = []Options{
	{MaxDepth: 64, Surrogates: true, ExactNumbers: true, KeepDuplicates: true, TreeDepth: 2, RootObject: true},
	{MaxDepth: 4, MaxValues: 40, ScalarDepth: true, Surrogates: true, ForbiddenKeys: []string{"__proto__", "b"}},
	{MaxDepth: 6, LiteralNumbers: true, TreeDepth: 3},
	{MaxDepth: 100},
}

// checkFastIsTokens fails unless decodeFast, when it accepts data, gives
// the tree the token decoder gives with no issue, and accepts every
// document the token decoder finds no issue in.
func checkFastIsTokens(t *testing.T, data []byte, opt Options) {
	t.Helper()
	fast, ok := decodeFast(data, &opt)
	var issues Collector
	slow := decodeTokens(data, "$", opt, &issues)
	clean := slow != nil && len(issues.List) == 0
	if ok != clean {
		t.Fatalf("decodeFast(%.300q, %+v) accepted=%v; token decoder: %v", data, opt, ok, issues.List)
	}
	if ok && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("decodeFast(%.300q, %+v) = %s; token decoder %s", data, opt, dumpNode(fast), dumpNode(slow))
	}
}

func dumpNode(n *Node) string {
	if n == nil {
		return "nil"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%c[%d:%d]%q", n.Kind, n.Off, n.End, n.Str)
	if n.Kind == Bool {
		fmt.Fprint(&b, n.Bool)
	}
	for i, k := range n.Keys {
		fmt.Fprintf(&b, " %q:%s", k, dumpNode(n.Vals[i]))
	}
	for _, e := range n.Elems {
		b.WriteString(" " + dumpNode(e))
	}
	return "(" + b.String() + ")"
}

// fastJSON is splitJSON with what the options judge: numbers beyond 2^53
// and the double range, unpaired surrogates, forbidden names, control
// characters, deep nesting.
func fastJSON(r *rand.Rand, b *strings.Builder, depth int) {
	switch r.IntN(14) {
	case 0:
		b.WriteString([]string{"9007199254740993", "1e400", "-0", "0.1", "1.50", "1E2", "-1e-7", "123456789012345678901234567890", "0e0"}[r.IntN(9)])
	case 1:
		b.WriteString([]string{`"\ud800"`, `"\ud83d\ude00"`, `"\udc00x"`, `"a\u0000b"`, "\"\x01\"", `"\u00e9\t"`, "\"\xff\"", `"__proto__"`}[r.IntN(8)])
	case 2:
		if depth < 8 {
			b.WriteString(`{"__proto__":`)
			fastJSON(r, b, depth+1)
			b.WriteString(`,"b":[`)
			fastJSON(r, b, depth+1)
			b.WriteString(`]}`)
			return
		}
		fallthrough
	default:
		splitJSON(r, b, depth)
	}
}

// TestDecodeFastIsDecode compares decodeFast with the token decoder on
// 20,000 random documents under each caller's options, each also cut and
// with one byte changed, and on the edges.
func TestDecodeFastIsDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 22))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		if r.IntN(2) == 0 {
			b.WriteString(`{"a":`)
			fastJSON(r, &b, 1)
			b.WriteString(`,"x":[`)
			fastJSON(r, &b, 2)
			b.WriteString(`]}`)
		} else {
			fastJSON(r, &b, 0)
		}
		doc := []byte(b.String())
		cut := doc[:r.IntN(len(doc)+1)]
		bad := bytes.Clone(doc)
		const subs = "{}[]\":,\\ x0-e.\x00"
		bad[r.IntN(len(bad))] = subs[r.IntN(len(subs))]
		for _, opt := range fastOptions {
			checkFastIsTokens(t, doc, opt)
			checkFastIsTokens(t, cut, opt)
			checkFastIsTokens(t, bad, opt)
		}
	}
	for _, s := range []string{``, ` `, `{}`, `[]`, ` {"a":1} `, `{"a":1}x`, `{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `[1,]`, `{"a":1,}`,
		`01`, `-`, `1.`, `.5`, `1e`, `+1`, `tru`, `truex`, `[true,false,null]`, `"\u12"`, `"\x"`, `"\/"`, `[-0.0e+0]`,
		strings.Repeat("[", 64) + strings.Repeat("]", 64), strings.Repeat("[", 65) + strings.Repeat("]", 65),
		`{"k":` + strings.Repeat(`[`, 63) + `1` + strings.Repeat(`]`, 63) + `}`,
		"{" + strings.Repeat(`"k":1,`, 3) + `"k":2}`, manyKeys(40, false), manyKeys(40, true),
		// Surrogate escapes, each edge of the ranges, paired and not.
		`"\udc00\udc00"`, `"\udbff\udfff"`, `"\ud800\udbff"`, `"\ud800\ue000"`, `"\uDFFF"`, `"\ud7ff\udc00"`,
		`"\ud800\u"`, `"\ud800\"`, `"\ud800"`, `"x\ud83d\ude00\ud83d\ude00y"`, `"\ud83d\ude00\ude00"`, `"\ue000\ud800"`,
		`["\ud800\udc00","\udc00"]`, `{"\ud800\udc00":"\ud800\udc01"}`,
	} {
		for _, opt := range fastOptions {
			checkFastIsTokens(t, []byte(s), opt)
		}
	}
}

// manyKeys is an object of n distinct names, with the first repeated at
// the end when dup is set (past the small-object set of names).
func manyKeys(n int, dup bool) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	if dup {
		b.WriteString(`"k0":0,`)
	}
	b.WriteString(`"end":true}`)
	return b.String()
}

// TestDecodeUsesTheFastDecoderOnlyWhenClean: a large clean envelope is
// decoded as the token decoder decodes it, and a large one with one
// duplicate deep inside still gets the token decoder's issue at its path.
func TestDecodeUsesTheFastDecoderOnlyWhenClean(t *testing.T) {
	var frames strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&frames, `{"sequence":%d,"at_ms":%d,"data":"line %d \u001b[0m é <&>"},`, i, i*3, i)
	}
	doc := `{"schema_version":2,"normalized_result":{"frames":[` + frames.String() + `{}]},"limitations":["x"]}`
	opt := fastOptions[0]
	var issues, slowIssues Collector
	got := Decode([]byte(doc), "$", opt, &issues)
	want := decodeTokens([]byte(doc), "$", opt, &slowIssues)
	if len(doc) < fastMin || got == nil || len(issues.List) > 0 || !reflect.DeepEqual(got, want) {
		t.Fatalf("a clean %d-byte document: %v %v", len(doc), issues.List, reflect.DeepEqual(got, want))
	}
	bad := strings.Replace(doc, `"at_ms":2997,`, `"at_ms":2997,"at_ms":1,`, 1)
	var badIssues Collector
	if n := Decode([]byte(bad), "$", opt, &badIssues); n == nil || len(badIssues.List) != 1 ||
		badIssues.List[0].Code != CodeDuplicateKey || badIssues.List[0].Path != "$.normalized_result.frames[999].at_ms" {
		t.Fatalf("a duplicate deep inside: %+v", badIssues.List)
	}
}

func FuzzDecodeFast(f *testing.F) {
	for _, s := range []string{`{"a":[1,"\ud83d\ude00",{"b":null}],"c":1e5}`, `{"a":1,"a":2}`, `[9007199254740993]`, `"\ud800"`, `{"__proto__":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opt := range fastOptions {
			checkFastIsTokens(t, data, opt)
		}
	})
}

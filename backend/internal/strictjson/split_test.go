package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// checkSplitIsUnmarshal fails unless SplitObject and SplitArray give
// what json.Unmarshal into a map[string]json.RawMessage and a
// []json.RawMessage gives for data, when data is valid JSON; for any
// data they must return without panicking.
func checkSplitIsUnmarshal(t *testing.T, data []byte) {
	t.Helper()
	names, values, oerr := SplitObject(data)
	elems, aerr := SplitArray(data)
	if !json.Valid(data) {
		return // delimited, not checked: only no panic is promised
	}
	// json.Unmarshal also reads null into a nil map or slice; the
	// splitters take only their own kind, and every valid one.
	first := bytes.TrimLeft(data, " \t\r\n")[0]
	if (first == '{') == (oerr != nil) || (first == '[') == (aerr != nil) {
		t.Fatalf("%.200q: SplitObject %v, SplitArray %v", data, oerr, aerr)
	}
	if first == '{' {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		got := map[string]json.RawMessage{}
		for i, n := range names {
			got[n] = values[i] // the last of repeated names, as encoding/json
		}
		if len(got) != len(m) {
			t.Fatalf("SplitObject(%.200q): %d names, json.Unmarshal %d", data, len(got), len(m))
		}
		for k, v := range m {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("SplitObject(%.200q)[%q] = %q, json.Unmarshal %q", data, k, got[k], v)
			}
		}
	}
	if first == '[' {
		var a []json.RawMessage
		if err := json.Unmarshal(data, &a); err != nil {
			t.Fatal(err)
		}
		if len(elems) != len(a) {
			t.Fatalf("SplitArray(%.200q): %d elements, json.Unmarshal %d", data, len(elems), len(a))
		}
		for i := range a {
			if !bytes.Equal(elems[i], a[i]) {
				t.Fatalf("SplitArray(%.200q)[%d] = %q, json.Unmarshal %q", data, i, elems[i], a[i])
			}
		}
	}
}

// splitJSON writes a random JSON value with whitespace everywhere it may
// be, strings with escaped quotes and backslashes (runs of them before a
// quote), brackets inside strings, repeated and non-ASCII names.
func splitJSON(r *rand.Rand, b *strings.Builder, depth int) {
	ws := func() {
		if r.IntN(3) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "\r\n "}[r.IntN(4)])
		}
	}
	str := func() {
		parts := []string{`a`, `\"`, `\\`, `\\\"`, `\\\\`, `{`, `]`, `,`, `:`, `é`, `\u00e9`, `\ud83d\ude00`, `😀`, ` `, `x y`, `\n`, `\/`}
		b.WriteByte('"')
		for n := r.IntN(5); n > 0; n-- {
			b.WriteString(parts[r.IntN(len(parts))])
		}
		b.WriteByte('"')
	}
	ws()
	switch k := r.IntN(9); {
	case k < 2 && depth < 5:
		b.WriteByte('{')
		ws()
		for i, n := 0, r.IntN(5); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
				ws()
			}
			if r.IntN(3) == 0 {
				b.WriteString([]string{`"a"`, `"b"`, `"\u0061"`}[r.IntN(3)])
			} else {
				str()
			}
			ws()
			b.WriteByte(':')
			splitJSON(r, b, depth+1)
		}
		b.WriteByte('}')
	case k < 4 && depth < 5:
		b.WriteByte('[')
		ws()
		for i, n := 0, r.IntN(5); i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			splitJSON(r, b, depth+1)
		}
		b.WriteByte(']')
	case k == 4:
		str()
	case k == 5:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	default:
		b.WriteString([]string{"0", "-1", "2.5e-3", "1E+21", fmt.Sprint(r.IntN(1 << 30))}[r.IntN(5)])
	}
	ws()
}

// TestSplitIsUnmarshal compares the splitters with encoding/json on
// 20,000 random documents, each also cut and with one byte changed
// (mostly invalid: then only no panic), and on the edges.
func TestSplitIsUnmarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 21))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		splitJSON(r, &b, 0)
		doc := []byte(b.String())
		checkSplitIsUnmarshal(t, doc)
		checkSplitIsUnmarshal(t, doc[:r.IntN(len(doc)+1)])
		bad := bytes.Clone(doc)
		const subs = "{}[]\":,\\ x"
		bad[r.IntN(len(bad))] = subs[r.IntN(len(subs))]
		checkSplitIsUnmarshal(t, bad)
	}
	for _, s := range []string{`{}`, `[]`, ` { } `, `[ ]`, `{"a":1,"a":2}`, `{"\\":"\\\\\""}`, `["\\\\"]`, `[""]`, `{"":""}`,
		`["]"]`, `{"a":"}"}`, `[[[]],{}]`, `{"a" : [ 1 , 2 ] , "b" : { } }`, `[1]x`, `{"a":1}}`, `"`, `[`, `{`, `{"a`, `{"a":`, `["\`, ``} {
		checkSplitIsUnmarshal(t, []byte(s))
	}
	if _, _, err := SplitObject([]byte(`[1]`)); err == nil {
		t.Error("an array split as an object")
	}
	if _, err := SplitArray([]byte(`{}`)); err == nil {
		t.Error("an object split as an array")
	}
	if _, _, err := SplitObject([]byte(`{"a":1} 2`)); err == nil {
		t.Error("trailing data accepted")
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{`{"a":[1,"]"],"b":{"c":"\\\""}}`, `[1, {"x": null}, "\\\\"]`, `{"\u0061":1,"a":2}`, `["\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSplitIsUnmarshal(t, data)
	})
}

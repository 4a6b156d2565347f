package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// checkMatchesJCS fails unless Canonicalize and jcs.Transform, the
// reference, return the same bytes, or both refuse data.
func checkMatchesJCS(t *testing.T, data []byte) {
	t.Helper()
	got, err := Canonicalize(data)
	want, werr := jcs.Transform(data)
	if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
		t.Fatalf("Canonicalize(%.300q) = %.300q, %v; jcs.Transform = %.300q, %v", data, got, err, want, werr)
	}
	if cerr := CheckCanonical(data); (cerr == nil) != (err == nil) || (err != nil && cerr.Error() != err.Error()) {
		t.Fatalf("CheckCanonical(%.300q) = %v; Canonicalize: %v", data, cerr, err)
	}
}

// randomJSON writes a random JSON value: objects with keys that need
// escapes, supplementary characters and BMP characters above U+E000 (where
// UTF-16 order differs from code point order), numbers of every spelling,
// and insignificant whitespace.
func randomJSON(r *rand.Rand, b *strings.Builder, depth int) {
	space := func() {
		if r.IntN(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t", "\r\n  "}[r.IntN(4)])
		}
	}
	space()
	switch k := r.IntN(10); {
	case k < 2 && depth < 6:
		b.WriteByte('{')
		n := r.IntN(6)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			space()
			b.WriteString(randomString(r))
			space()
			b.WriteByte(':')
			randomJSON(r, b, depth+1)
		}
		b.WriteByte('}')
	case k < 4 && depth < 6:
		b.WriteByte('[')
		n := r.IntN(5)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(r, b, depth+1)
		}
		b.WriteByte(']')
	case k < 6:
		b.WriteString(randomString(r))
	case k < 9:
		b.WriteString(randomNumber(r))
	default:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	}
	space()
}

var stringPieces = []string{
	"a", "b", "Z", "0", " ", "é", "ﬁ", "\uffff", "\ue000", "😀", "𝄞", "\U0010ffff", "\u20ac", "<&>",
	`\n`, `\t`, `\b`, `\f`, `\r`, `\"`, `\\`, `\/`, `\u0000`, `\u001f`, `\u007f`, `\u00e9`, `\uD83D\uDE00`,
	`\ud800\udc00`, `\uDBFF\uDFFF`, `\uE000`, `\u2028`, "\x7f", "\u0085",
}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	b.WriteByte('"')
	for n := r.IntN(5); n > 0; n-- {
		b.WriteString(stringPieces[r.IntN(len(stringPieces))])
	}
	b.WriteByte('"')
	return b.String()
}

func randomNumber(r *rand.Rand) string {
	switch r.IntN(7) {
	case 0:
		return fmt.Sprint(r.IntN(2000) - 1000)
	case 1:
		return fmt.Sprint(r.Int64())
	case 2:
		return fmt.Sprintf("%g", r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
	case 3:
		return fmt.Sprintf("%.17e", r.Float64()*1e25)
	case 4:
		return []string{"-0", "0.0", "1E21", "1e+21", "4.50", "2e-3", "1E-7", "9007199254740993", "1e400", "-1e-400", "5e-324", "123456789012345678901234567890"}[r.IntN(12)]
	case 5:
		return fmt.Sprintf("%d.%de%d", r.IntN(100), r.IntN(1000), r.IntN(40)-20)
	default:
		return fmt.Sprint(r.IntN(1 << 20))
	}
}

// TestCanonicalizeMatchesJCS compares Canonicalize with jcs.Transform on
// 20,000 random documents and on each of them with one byte cut off or
// changed (mostly malformed), so acceptance is compared as well as output.
func TestCanonicalizeMatchesJCS(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		randomJSON(r, &b, 0)
		doc := []byte(b.String())
		checkMatchesJCS(t, doc)
		if len(doc) > 1 {
			checkMatchesJCS(t, doc[:r.IntN(len(doc))])
			bad := bytes.Clone(doc)
			const subs = "{}[]\":,\\ x0-e.\x00\xff\xed"
			bad[r.IntN(len(bad))] = subs[r.IntN(len(subs))]
			checkMatchesJCS(t, bad)
		}
	}
}

// TestCanonicalizeMatchesJCSOnRecords compares the two on a capture-shaped
// Evidence envelope (struct members out of order, many frames with escape
// sequences) and on the edge cases of the format.
func TestCanonicalizeMatchesJCSOnRecords(t *testing.T) {
	var frames strings.Builder
	for i := 0; i < 2000; i++ {
		if i > 0 {
			frames.WriteByte(',')
		}
		fmt.Fprintf(&frames, `{"sequence":%d,"at_ms":%d,"data":"line %d \u001b[32mok\u001b[0m é😀\r\n","lines":["a\"b","\\u"]}`, i, i*3, i)
	}
	e := sampleCapture()
	e.NormalizedResult = json.RawMessage(`{"z":1,"frames":[` + frames.String() + `],"truncated":false,"😀":1,"\ue000":2,"a":{"y":[],"x":{}}}`)
	checkMatchesJCS(t, sealed(t, e))
	for _, s := range []string{
		`{"a":1,"a":2}`, `{"\u0061":1,"a":2}`, `{"😀":1,"\ud83d\ude00":2}`, `["\ud800"]`, `["\udc00"]`, `["\ud800\u0041"]`,
		`["\ud800x"]`, `"\u00"`, `"\u00g0"`, `01`, `-`, `1.`, `.5`, `1e`, `+1`, `tru`, `truex`, `nul`, `[1,]`, `[,1]`,
		`{"a":1,}`, `{,}`, `{"a"}`, `{"a":}`, `1 2`, ` 1 `, "", " ", `"a`, "\"\x01\"", "\"\xff\"", "\"\xed\xa0\x80\"",
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000), strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat(`{"b":`, 3000) + `1,"a":2` + strings.Repeat("}", 3000),
	} {
		checkMatchesJCS(t, []byte(s))
	}
	if _, err := Canonicalize(nil); err == nil {
		t.Fatal("Canonicalize(nil) succeeded")
	}
}

// TestComputeIDRefusesRawMessageAddingMembers: a raw message is one JSON
// value; one that would add members to the projection when written
// around it is refused, as json.Marshal refuses it.
func TestComputeIDRefusesRawMessageAddingMembers(t *testing.T) {
	e := sampleCapture()
	e.NormalizedResult = json.RawMessage(`1,"zz":2`)
	if id, err := ComputeID(e); err == nil {
		t.Fatalf("ComputeID accepted a raw message of two members: %s", id)
	}
	if err := Seal(e); err == nil {
		t.Fatal("Seal accepted a raw message of two members")
	}
}

// TestSealJSONIsWhatParseAccepts: the bytes SealJSON returns parse, with
// the evidence_id it set, and keep "<" and ">" literal; a broken envelope
// gets no bytes and no id.
func TestSealJSONIsWhatParseAccepts(t *testing.T) {
	e := sampleCapture()
	e.NormalizedResult = json.RawMessage(`{"frames":[{"sequence":0,"at_ms":0,"data":"<redacted> \u001b[0m"}],"truncated":false}`)
	data, err := SealJSON(e)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("}\n")) || !bytes.Contains(data, []byte("<redacted>")) {
		t.Fatalf("SealJSON = %.200q", data)
	}
	got, issues := Parse(data)
	if issues != nil || got.EvidenceID != e.EvidenceID || !ValidID(e.EvidenceID) {
		t.Fatalf("Parse(SealJSON) = %v, %v; sealed id %s", got, issues, e.EvidenceID)
	}
	bad := sampleCapture()
	bad.Confidence = "certain"
	if data, err := SealJSON(bad); err == nil || data != nil || bad.EvidenceID != "" {
		t.Fatalf("SealJSON of a broken envelope = %q, %v, id %q", data, err, bad.EvidenceID)
	}
}

// TestSealJSONSplicesOnlyWhatEncodingJSONWouldWrite: a large normalized
// result is written around the envelope (seal_encode.go) only when that
// gives the bytes encoding/json writes; one with whitespace outside its
// strings is compacted as before, and a large invalid one is refused.
func TestSealJSONSplicesOnlyWhatEncodingJSONWouldWrite(t *testing.T) {
	text := strings.Repeat(`line with spaces, "quotes" and \\ <tags> `, 3000)
	data, _ := json.Marshal(map[string]any{"frames": []any{map[string]any{"data": text}}, "n": 1})
	spaced := bytes.ReplaceAll(data, []byte(`,"n"`), []byte(", \n\t\"n\""))
	for _, raw := range [][]byte{data, spaced} {
		if len(raw) < spliceMin {
			t.Fatalf("the result is %d bytes, below the splice size", len(raw))
		}
		e := sampleCapture()
		e.NormalizedResult = raw
		got, err := SealJSON(e)
		if err != nil {
			t.Fatal(err)
		}
		want, err := encodeJSON(e) // encoding/json, with the id SealJSON set
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("SealJSON wrote %d bytes that differ from encoding/json's %d (compact input %v)", len(got), len(want), compactJSON(raw))
		}
	}
	for _, bad := range []string{`{"a":"` + text, `{"a":1}}`, `{"a":1,"a":2,"x":"` + text + `"}`} {
		e := sampleCapture()
		e.NormalizedResult = json.RawMessage(bad)
		if out, err := SealJSON(e); err == nil || out != nil {
			t.Errorf("SealJSON accepted a broken normalized result (%.40q…): %v", bad, err)
		}
	}
}

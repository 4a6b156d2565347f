package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// referenceID is the evidence_id by its definition, with the reference
// RFC 8785 library: the projection (e as JSON without evidence_id, the
// subject reduced to its identity) written as one object around the raw
// messages, each of which must be one JSON value, then jcs.Transform and
// SHA-256.
func referenceID(e *Envelope) (string, error) {
	c := *e
	c.EvidenceID = ""
	c.Parameters, c.RawResult, c.NormalizedResult, c.Subject = nil, nil, nil, nil
	if c.Limitations == nil {
		c.Limitations = []string{}
	}
	if c.Locations == nil {
		c.Locations = []json.RawMessage{}
	}
	if c.EvidenceLinks == nil {
		c.EvidenceLinks = []string{}
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", err
	}
	delete(p, "evidence_id")
	p["parameters"], p["raw_result"], p["normalized_result"] = rawOrNull(e.Parameters), rawOrNull(e.RawResult), rawOrNull(e.NormalizedResult)
	if e.Subject != nil {
		p["subject"], _ = json.Marshal(map[string]any{"digest": e.Subject.Digest, "format": e.Subject.Format, "architecture": e.Subject.Architecture})
	}
	keys := make([]string, 0, len(p))
	for k, v := range p {
		if !json.Valid(v) {
			return "", jcsError(k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var obj strings.Builder
	obj.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			obj.WriteByte(',')
		}
		obj.WriteString(`"` + k + `":`)
		obj.Write(p[k])
	}
	obj.WriteByte('}')
	canonical, err := jcs.Transform([]byte(obj.String()))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return IDPrefix + hex.EncodeToString(sum[:]), nil
}

type jcsError string

func (e jcsError) Error() string { return string(e) + " is not one JSON value" }

// checkIDIsReference fails unless ComputeID and referenceID agree on e:
// the same id, or both refuse it.
func checkIDIsReference(t *testing.T, e *Envelope) {
	t.Helper()
	got, err := ComputeID(e)
	want, werr := referenceID(e)
	if (err == nil) != (werr == nil) || got != want {
		t.Fatalf("ComputeID = %s, %v; reference = %s, %v (normalized_result %.200q)", got, err, want, werr, e.NormalizedResult)
	}
}

// TestComputeIDIsJCSOfTheProjection: ComputeID, which canonicalizes the
// projection member by member (id.go), gives the id jcs.Transform of the
// whole projection gives, and refuses what it refuses, on random results
// (and each cut or with one byte changed, mostly malformed), on
// capture-shaped records, with and without subject and raw_result, and on
// the edges: nesting at the limit and one past it (the result is one
// level deep in the projection), raw messages that are not one value,
// duplicates, lone surrogates.
func TestComputeIDIsJCSOfTheProjection(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 16))
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		randomJSON(r, &b, 0)
		doc := []byte(b.String())
		e := sampleCapture()
		if i%3 == 0 {
			e.Subject = nil
		}
		if i%4 == 0 {
			e.RawResult = json.RawMessage(`{"x": [1, 2.50]}`)
		}
		e.NormalizedResult = doc
		checkIDIsReference(t, e)
		if len(doc) > 1 {
			e.NormalizedResult = doc[:r.IntN(len(doc))]
			checkIDIsReference(t, e)
			bad := []byte(strings.Clone(string(doc)))
			const subs = "{}[]\":,\\ x0-e.\x00\xff\xed"
			bad[r.IntN(len(bad))] = subs[r.IntN(len(subs))]
			e.NormalizedResult = bad
			checkIDIsReference(t, e)
		}
	}
	for _, s := range []string{
		strings.Repeat("[", 9999) + strings.Repeat("]", 9999), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		`1,"zz":2`, `1 2`, ` {"a" : 1} `, `{"a":1,"a":2}`, `["\ud800"]`, `[1e400]`, `{"b":1,"a":[-0, 1E21, 4.50]}`, `null`, "\n",
	} {
		e := sampleCapture()
		e.NormalizedResult = json.RawMessage(s)
		checkIDIsReference(t, e)
	}
	e := sampleCapture()
	e.Parameters = json.RawMessage(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))
	checkIDIsReference(t, e)
	e = sampleCapture()
	var frames strings.Builder
	for i := 0; i < 3000; i++ {
		frames.WriteString(`{"sequence":1,"at_ms":2,"data":"line \u001b[32mok\u001b[0m é😀 <&> \u2028\r\n"},`)
	}
	e.NormalizedResult = json.RawMessage(`{"z":1,"frames":[` + frames.String() + `{}],"😀":1,"\ue000":2}`)
	checkIDIsReference(t, e)
}

// TestSealReusesOnlyTheSameBytes: the seal's check takes the evidence_id
// of the result it wrote from the memo only for the same bytes; a memo of
// other bytes is not used.
func TestSealReusesOnlyTheSameBytes(t *testing.T) {
	e := sampleCapture()
	e.NormalizedResult = json.RawMessage(`{"frames":[` + strings.Repeat(`{"data":"x"},`, spliceMin/10) + `{}]}`)
	memo := &canonicalMemo{}
	id, err := computeID(e, memo)
	if err != nil || memo.id != id {
		t.Fatalf("%s %v, memo kept: %q", id, err, memo.id)
	}
	other := *e
	other.NormalizedResult = json.RawMessage(strings.Replace(string(e.NormalizedResult), `"x"`, `"y"`, 1))
	got, err := computeID(&other, memo)
	want, _ := ComputeID(&other)
	if err != nil || got != want || got == id {
		t.Fatalf("other bytes with the memo: %s %v; want %s", got, err, want)
	}
	if again, _ := computeID(e, memo); again != id {
		t.Fatalf("the same bytes with the memo: %s, want %s", again, id)
	}
}

// FuzzComputeID compares ComputeID with the reference (jcs.Transform of
// the projection) for any normalized result.
func FuzzComputeID(f *testing.F) {
	for _, s := range []string{`{"frames":[{"data":"a\u001b[0m"}],"truncated":false}`, `1,"zz":2`, `[1e400]`, `{"a":1,"a":2}`, `"\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, result []byte) {
		e := sampleCapture()
		e.NormalizedResult = result
		checkIDIsReference(t, e)
	})
}

// TestComputeIDMemoIsPerProjection: the memo seal shares between the
// envelope it writes and the one it parses back gives a kept evidence_id
// only to a projection with the same members byte for byte; any other
// envelope (one byte of the large result changed, any other member
// changed or dropped) gets its own, ComputeID's.
func TestComputeIDMemoIsPerProjection(t *testing.T) {
	large := json.RawMessage(`{"frames":["` + strings.Repeat("x", spliceMin) + `"],"truncated":false}`)
	e := sampleCaptureWith(large)
	memo := &canonicalMemo{}
	id, err := computeID(e, memo)
	if err != nil || memo.id != id {
		t.Fatalf("computeID: %v (memo kept %q)", err, memo.id)
	}
	if again, _ := computeID(sampleCaptureWith(slices.Clone(large)), memo); again != id {
		t.Fatalf("the same projection in other memory: %s, want %s", again, id)
	}
	for name, edit := range map[string]func(e *Envelope){
		"result byte": func(e *Envelope) { r := slices.Clone(large); r[20] = 'y'; e.NormalizedResult = r },
		"result shorter": func(e *Envelope) {
			e.NormalizedResult = json.RawMessage(`{"frames":["` + strings.Repeat("x", spliceMin-1) + `"],"truncated":false}`)
		},
		"operation":        func(e *Envelope) { e.Operation = "other" },
		"parameters":       func(e *Envelope) { e.Parameters = json.RawMessage(`{}`) },
		"subject":          func(e *Envelope) { e.Subject.Digest.SHA256 = strings.Repeat("cd", 32) },
		"no subject":       func(e *Envelope) { e.Subject = nil },
		"limitation":       func(e *Envelope) { e.Limitations = append(e.Limitations, "x") },
		"raw result":       func(e *Envelope) { e.RawResult = json.RawMessage(`1`) },
		"evidence link":    func(e *Envelope) { e.EvidenceLinks = []string{"ev_" + strings.Repeat("0", 64)} },
		"environment":      func(e *Envelope) { e.Environment.ID = "other" },
		"provider version": func(e *Envelope) { e.Provider.Version = "5" },
		"location":         func(e *Envelope) { e.Locations = nil },
		"schema version":   func(e *Envelope) { e.SchemaVersion = 3 },
		"confidence":       func(e *Envelope) { e.Confidence = Inferred },
		"predicate type":   func(e *Envelope) { e.PredicateType = PredicateProcessComparison },
	} {
		m := &canonicalMemo{}
		computeID(sampleCaptureWith(large), m)
		e2 := sampleCaptureWith(large)
		edit(e2)
		want, err := ComputeID(e2)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		kept := m.id
		got, err := computeID(e2, m)
		if err != nil || got != want || got == kept {
			t.Errorf("%s: computeID with the memo %s (%v), ComputeID %s, kept %s", name, got, err, want, kept)
		}
	}
}

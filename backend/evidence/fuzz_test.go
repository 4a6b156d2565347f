package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

func FuzzParse(f *testing.F) {
	capture := sealed(f, sampleCapture())
	comparison := sealed(f, sampleComparison())
	f.Add(capture)
	f.Add(comparison)
	f.Add(bytes.Replace(capture, []byte(`"provider":{`), []byte(`"provider":{"id":"x",`), 1))
	f.Add(bytes.Replace(capture, []byte(`"normalized_result":{`), []byte(`"normalized_result":{"n":9007199254740993,"s":"\ud800",`), 1))
	f.Add([]byte(`{"schema_version":2,"evidence_id":"ev_` + strings.Repeat("0", 64) + `"}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`[[[[[[[[`))
	f.Add([]byte(`{"a":1} {"b":2}`))
	f.Add([]byte("\xef\xbb\xbf{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, issues := Parse(data)
		if (e == nil) == (len(issues) == 0) {
			t.Fatalf("envelope %v with issues %v", e, issues)
		}
		if len(issues) > MaxIssues {
			t.Fatalf("%d issues", len(issues))
		}
		for _, i := range issues {
			if i.Code == "" || i.Message == "" || !strings.HasPrefix(i.Path, "$") {
				t.Fatalf("incomplete issue %+v", i)
			}
		}
		if e == nil {
			return
		}
		// Every accepted envelope re-verifies: its id is its content's id,
		// the input is canonical JSON, and it survives a round trip.
		if id, err := ComputeID(e); err != nil || id != e.EvidenceID {
			t.Fatalf("accepted envelope with id %s recomputes to %s, %v", e.EvidenceID, id, err)
		}
		if _, err := Canonicalize(data); err != nil {
			t.Fatalf("accepted envelope does not canonicalize: %v", err)
		}
		out, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("accepted envelope does not encode: %v", err)
		}
		again, issues := Parse(out)
		if again == nil || again.EvidenceID != e.EvidenceID {
			t.Fatalf("re-encoded envelope rejected: %v", issues)
		}
		resealed := *again
		if err := Seal(&resealed); err != nil || resealed.EvidenceID != e.EvidenceID {
			t.Fatalf("re-sealing changed the id to %s: %v", resealed.EvidenceID, err)
		}
		// SealParsed's parse is Parse's for the bytes it sealed.
		sealedBy := *again
		sb, sp, err := SealParsed(&sealedBy)
		if err != nil || sealedBy.EvidenceID != e.EvidenceID {
			t.Fatalf("SealParsed changed the id to %s: %v", sealedBy.EvidenceID, err)
		}
		if pp, issues := Parse(sb); issues != nil || !reflect.DeepEqual(pp, sp) {
			t.Fatalf("SealParsed's parse differs from Parse's: %v", issues)
		}
	})
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `0`, `-0`, `1E21`, `0.1`, `9007199254740993`,
		`{"paths":true,"pids":true,"ports":true,"time_bucket_ms":10,"patterns":[]}`,
		`{"ﬁ":1,"😀":2,"\u20ac":3,"\r":4}`, `"<&>\u003c"`, `{"a":1,"a":2}`, `["\ud800"]`,
		`[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001]`,
		`["a\u001b[0m\n\t\"\\ é", "\/", "\u0041", "\u001B", "\u000a", "\u007f", "\u0000\u001f", "\b\f\r"]`,
		"[\"a\x01\"]", "[\"\xff\"]", `["abc`, `{"k\u0041":"v\u00e9","k":"\ud83d\ude00"}`,
	} {
		f.Add([]byte(s))
	}
	f.Add(sealed(f, sampleCapture()))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Canonicalize(data)
		ref, rerr := jcs.Transform(data) // the reference implementation
		if (err == nil) != (rerr == nil) || !bytes.Equal(out, ref) {
			t.Fatalf("Canonicalize(%q) = %q, %v; jcs.Transform = %q, %v", data, out, err, ref, rerr)
		}
		// The check and the streamed form fail with the same error and
		// write the same bytes.
		if cerr := CheckCanonical(data); fmt.Sprint(cerr) != fmt.Sprint(err) {
			t.Fatalf("CheckCanonical(%q) = %v; Canonicalize: %v", data, cerr, err)
		}
		var streamed bytes.Buffer
		serr := canonicalizeTo(&streamed, data, 0)
		if _, cerr := canonicalize(data); fmt.Sprint(serr) != fmt.Sprint(cerr) || err == nil && !bytes.Equal(streamed.Bytes(), out) {
			t.Fatalf("canonicalizeTo(%q) = %q, %v; canonicalize: %q, %v", data, streamed.Bytes(), serr, out, cerr)
		}
		if err != nil {
			if _, derr := DigestJSON(data); derr == nil {
				t.Fatalf("DigestJSON accepted what Canonicalize rejected: %v", err)
			}
			return
		}
		again, err := Canonicalize(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q → %q → %q (%v)", data, out, again, err)
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form is not JSON: %q", out)
		}
		sum := sha256.Sum256(out)
		want := hex.EncodeToString(sum[:])
		d1, err1 := DigestJSON(data)
		d2, err2 := DigestJSON(out)
		if err1 != nil || err2 != nil || d1 != want || d2 != want {
			t.Fatalf("digest not stable: %s %s want %s (%v %v)", d1, d2, want, err1, err2)
		}
	})
}

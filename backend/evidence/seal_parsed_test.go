package evidence

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestSealParsedIsParse: SealParsed returns SealJSON's bytes and the very
// envelope Parse returns for them; a broken envelope gets no bytes, no
// parse and no id.
func TestSealParsedIsParse(t *testing.T) {
	e := sampleCapture()
	e.NormalizedResult = json.RawMessage(`{"frames":[{"sequence":0,"at_ms":0,"data":"<redacted> \u001b[0m"}],"truncated":false}`)
	data, parsed, err := SealParsed(e)
	if err != nil {
		t.Fatal(err)
	}
	want, issues := Parse(data)
	if issues != nil || !reflect.DeepEqual(parsed, want) || parsed.EvidenceID != e.EvidenceID {
		t.Fatalf("SealParsed parse %+v, Parse %+v %v", parsed, want, issues)
	}
	again, err := SealJSON(sampleCaptureWith(e.NormalizedResult))
	if err != nil || string(again) != string(data) {
		t.Fatalf("SealJSON differs from SealParsed: %v", err)
	}
	bad := sampleCapture()
	bad.Confidence = "certain"
	if data, parsed, err := SealParsed(bad); err == nil || data != nil || parsed != nil || bad.EvidenceID != "" {
		t.Fatalf("SealParsed of a broken envelope = %q, %v, %v, id %q", data, parsed, err, bad.EvidenceID)
	}
	if _, _, err := SealParsed(nil); err == nil {
		t.Fatal("SealParsed(nil) sealed")
	}
}

func sampleCaptureWith(result json.RawMessage) *Envelope {
	e := sampleCapture()
	e.NormalizedResult = result
	return e
}

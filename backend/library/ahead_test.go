package library

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
)

// pinnedRecords are the record of docs/examples' valid capture (it
// verifies) and the same record with its first frame's sequence changed
// (it does not).
func pinnedRecords(t *testing.T) (good, bad []byte) {
	t.Helper()
	raw, err := os.ReadFile("../../docs/examples/evidence-envelope/valid-capture-printf.json")
	if err != nil {
		t.Fatal(err)
	}
	env, issues := evidence.Parse(raw)
	if len(issues) > 0 {
		t.Fatal(evidence.IssueList(issues))
	}
	good = env.NormalizedResult
	var m map[string]any
	if err := json.Unmarshal(good, &m); err != nil {
		t.Fatal(err)
	}
	m["frames"].([]any)[0].(map[string]any)["sequence"] = 7
	if bad, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if issues := record.Verify(good); len(issues) > 0 {
		t.Fatalf("the pinned record does not verify: %v", issues)
	}
	if issues := record.Verify(bad); len(issues) == 0 {
		t.Fatal("the changed record verifies; the test would test nothing")
	}
	return good, bad
}

// recordEnvelope is the capture Evidence envelope of raw, not sealed.
func recordEnvelope(t *testing.T, raw []byte) *evidence.Envelope {
	t.Helper()
	var rec record.Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	ev, err := record.NewEnvelope(&rec, bytes.Clone(raw), "t")
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// sealRecord seals raw as capture Evidence (evidence.SealParsed).
func sealRecord(t *testing.T, raw []byte) ([]byte, *evidence.Envelope, string) {
	t.Helper()
	ev := recordEnvelope(t, raw)
	out, parsed, err := evidence.SealParsed(ev)
	if err != nil {
		t.Fatal(err)
	}
	return out, parsed, ev.EvidenceID
}

// TestCheckAheadCountsOnlyForTheSameBytes, from the attacker's side: a
// record check started ahead on other bytes than those sealed — a good
// record's check for a bad sealed record, or a bad one's for a good
// record — never decides the save; the sealed record is checked itself.
// With the same bytes the result is CheckParsedForSave's.
func TestCheckAheadCountsOnlyForTheSameBytes(t *testing.T) {
	good, bad := pinnedRecords(t)
	for _, c := range []struct {
		name        string
		ahead, seal []byte
	}{{"good ahead, bad sealed", good, bad}, {"bad ahead, good sealed", bad, good}, {"good", good, good}, {"bad", bad, bad}} {
		out, parsed, id := sealRecord(t, c.seal)
		want, wantErr := CheckParsedForSave(out, parsed, id)
		got, err := CheckParsedForSaveAhead(out, parsed, id, CheckRecordAhead(c.ahead))
		if (err == nil) != bytes.Equal(c.seal, good) {
			t.Errorf("%s: error %v", c.name, err)
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(err, wantErr) {
			t.Errorf("%s: %+v, %v; CheckParsedForSave: %+v, %v", c.name, got.res, err, want.res, wantErr)
		}
	}
}

// TestCheckAheadIsOfTheBytesItChecked, from the attacker's side: the
// bytes a check was started on change after it ran (CheckRecordAhead
// keeps the caller's slice) into the bad record that is then sealed. The
// check ahead proved the good bytes, not these: the sealed record is
// checked itself and refused. Comparing the caller's slice, not the bytes
// the proof holds, accepted it.
func TestCheckAheadIsOfTheBytesItChecked(t *testing.T) {
	good, _ := pinnedRecords(t)
	i := bytes.Index(good, []byte(`"schema_version": 4`))
	if i < 0 {
		t.Fatal("the pinned record has no schema_version 4")
	}
	bad := bytes.Clone(good) // the same length: another schema version
	bad[i+len(`"schema_version": `)] = '5'
	out, parsed, id := sealRecord(t, bad)
	sealed := parsed.NormalizedResult // the record's bytes as the seal holds them
	j := bytes.Index(sealed, []byte(`"schema_version":5`))
	if j < 0 {
		t.Fatalf("the sealed record has no schema_version 5: %.100s", sealed)
	}
	buf := bytes.Clone(sealed) // the good record in the sealed form
	buf[j+len(`"schema_version":`)] = '4'
	if issues := record.Verify(buf); len(issues) > 0 {
		t.Fatalf("the good record in the sealed form does not verify: %v", issues)
	}
	if issues := record.Verify(sealed); len(issues) == 0 {
		t.Fatal("the sealed record verifies; the test would test nothing")
	}
	ahead := CheckRecordAhead(buf)
	<-ahead.done
	copy(buf, sealed) // after the check: the caller's slice now holds the bad record
	if _, err := CheckParsedForSaveAhead(out, parsed, id, ahead); err == nil {
		t.Fatal("a bad record was accepted on the proof of the good bytes its slice held before")
	}
}

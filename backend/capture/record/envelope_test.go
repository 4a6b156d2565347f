package record

import (
	"encoding/json"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

func TestNewEnvelopeCommitsToTheManifest(t *testing.T) {
	rec := &Record{Limitations: []string{"a"}}
	rec.Manifest.FullScenarioSHA256, rec.Manifest.ComparisonContractSHA256 = "s", "c"
	ev, err := NewEnvelope(rec, json.RawMessage(`{"schema_version":4}`), "9.9")
	if err != nil {
		t.Fatal(err)
	}
	rec.Limitations[0] = "changed"
	if ev.PredicateType != evidence.PredicateProcessCapture || ev.Operation != evidence.OperationCaptureProcess ||
		ev.Provider != (evidence.Provider{ID: evidence.ProcessProviderID, Name: ProviderName, Version: "9.9"}) ||
		ev.Confidence != evidence.Observed || ev.Authority != evidence.AuthorityControlledReplay {
		t.Fatalf("envelope %+v", ev)
	}
	if string(ev.Parameters) != `{"comparison_contract_sha256":"c","full_scenario_sha256":"s"}` {
		t.Errorf("parameters %s", ev.Parameters)
	}
	if len(ev.Limitations) != 1 || ev.Limitations[0] != "a" {
		t.Errorf("limitations %v: not a copy of the record's", ev.Limitations)
	}
	if _, _, err := evidence.SealParsed(ev); err != nil {
		t.Errorf("the envelope does not seal: %v", err)
	}
}

func TestFieldsAreTheJSONMembersInOrder(t *testing.T) {
	got := Fields(Exit{})
	if len(got) != 3 || got[0] != "code" || got[1] != "signal" || got[2] != "reason" {
		t.Errorf("Fields(Exit{}) = %v", got)
	}
	if Fields(1) != nil || Fields(nil) != nil {
		t.Error("Fields of a non-struct is not nil")
	}
}

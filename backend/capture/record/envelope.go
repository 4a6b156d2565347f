package record

import (
	"encoding/json"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// ProviderName is the provider name of Process Capture Evidence.
const ProviderName = "Gatehouse Process Capture"

// NewEnvelope is the unsealed Evidence v2 envelope of the capture rec
// (docs/formats/capture-record.md, "The envelope"): provider
// evidence.ProcessProviderID named ProviderName at providerVersion,
// predicate evidence.PredicateProcessCapture, operation
// evidence.OperationCaptureProcess, parameters committing to the
// manifest's full_scenario_sha256 and comparison_contract_sha256,
// normalized_result result, confidence observed, authority
// controlled-replay, and a copy of rec's limitations. result must be the
// caller's JSON encoding of rec (the caller chooses the encoder; the
// envelope does not re-encode a record that may be megabytes). Seal the
// envelope with evidence.Seal or evidence.SealParsed.
func NewEnvelope(rec *Record, result json.RawMessage, providerVersion string) (*evidence.Envelope, error) {
	params, err := json.Marshal(map[string]string{
		"full_scenario_sha256":       rec.Manifest.FullScenarioSHA256,
		"comparison_contract_sha256": rec.Manifest.ComparisonContractSHA256,
	})
	if err != nil {
		return nil, fmt.Errorf("record: encode the envelope parameters: %w", err)
	}
	return &evidence.Envelope{
		Provider:         evidence.Provider{ID: evidence.ProcessProviderID, Name: ProviderName, Version: providerVersion},
		PredicateType:    evidence.PredicateProcessCapture,
		Operation:        evidence.OperationCaptureProcess,
		Parameters:       params,
		NormalizedResult: result,
		Confidence:       evidence.Observed,
		Authority:        evidence.AuthorityControlledReplay,
		Limitations:      append([]string{}, rec.Limitations...),
	}, nil
}

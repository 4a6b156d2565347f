package compare

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// Provider of comparison Evidence.
const (
	ProviderID      = "gatehouse-compare"
	ProviderName    = "Gatehouse process capture comparison"
	ProviderVersion = "1"
)

// Envelope returns sealed comparison Evidence for result, which Compare
// produced from left and right: predicate gatehouse.process-comparison/v3
// (v4 when a trace spec was used), operation compare_process_captures,
// confidence derived, authority analyst-inference, evidence_links [left,
// right], normalized_result the result, parameters what the comparison was
// asked ({max_capture_age_ms, checked_at, trace_spec}, each null when not
// used), limitations the result's, and locations the two items of a found
// first divergence ({evidence_id, path}).
func Envelope(result Result, left, right *evidence.Envelope) (*evidence.Envelope, error) {
	if left == nil || right == nil {
		return nil, errors.New("compare: envelope: nil capture envelope")
	}
	if result.Limitations == nil {
		result.Limitations = []string{}
	}
	norm, err := json.Marshal(result)
	if err != nil {
		return nil, fmt.Errorf("compare: envelope: encode result: %w", err)
	}
	params, err := json.Marshal(result.params)
	if err != nil {
		return nil, fmt.Errorf("compare: envelope: encode parameters: %w", err)
	}
	predicate := evidence.PredicateProcessComparison
	if result.Trace != nil {
		predicate = evidence.PredicateProcessComparisonTrace
	}
	var locations []json.RawMessage
	if fd := result.FirstDivergence; fd.Status == DivergenceFound {
		for _, l := range []struct{ id, path string }{{left.EvidenceID, fd.LeftLocation}, {right.EvidenceID, fd.RightLocation}} {
			if l.path == "" {
				continue
			}
			b, _ := json.Marshal(struct {
				EvidenceID string `json:"evidence_id"`
				Path       string `json:"path"`
			}{l.id, l.path})
			locations = append(locations, b)
		}
	}
	e := &evidence.Envelope{
		SchemaVersion:    evidence.SchemaVersion,
		Provider:         evidence.Provider{ID: ProviderID, Name: ProviderName, Version: ProviderVersion},
		PredicateType:    predicate,
		Operation:        evidence.OperationCompareProcesses,
		Parameters:       params,
		RawResult:        json.RawMessage("null"),
		NormalizedResult: norm,
		Confidence:       evidence.Derived,
		Authority:        evidence.AuthorityAnalystInference,
		Limitations:      append([]string{}, result.Limitations...),
		Locations:        locations,
		EvidenceLinks:    []string{left.EvidenceID, right.EvidenceID},
	}
	if err := evidence.Seal(e); err != nil {
		return nil, fmt.Errorf("compare: envelope: %w", err)
	}
	return e, nil
}

package evidence

import "testing"

// TestSpecVocabulary pins the names docs/formats/capture-record.md gives Process
// Capture and comparison Evidence, as the spec spells them: other tests
// compare against the constants, so an edited constant would go unnoticed.
func TestSpecVocabulary(t *testing.T) {
	for got, want := range map[string]string{
		ProcessProviderID:                 "gatehouse-process",
		PredicateProcessCapture:           "gatehouse.process-capture/v4",
		OperationCaptureProcess:           "capture_process_scenario",
		PredicateProcessComparison:        "gatehouse.process-comparison/v3",
		PredicateProcessComparisonTrace:   "gatehouse.process-comparison/v4",
		OperationCompareProcesses:         "compare_process_captures",
		string(Observed):                  "observed",
		string(Derived):                   "derived",
		string(AuthorityControlledReplay): "controlled-replay",
		string(AuthorityAnalystInference): "analyst-inference",
	} {
		if got != want {
			t.Errorf("%q, the spec says %q", got, want)
		}
	}
}

package compare

import "testing"

// TestCompareRefusesWhatVerifyRefuses: records compare's own checker used
// to accept, though no capture could produce them, are refused by Compare
// and Diffs with record.Verify's code and path, on the side that has it.
func TestCompareRefusesWhatVerifyRefuses(t *testing.T) {
	good := env(t, baseRecord())
	cases := []struct {
		name       string
		build      func() obj
		path, code string
	}{
		{"scenario against contract", func() obj { return finish(baseRecord()) }, root + ".manifest.comparison_contract", "commitment_mismatch"},
		{"final files against the last checkpoint", func() obj {
			r := finishValid(baseRecord())
			r["files_after"] = arr{fileState("<filesystem-root-0>/a", "a")}
			return r
		}, root + ".files_after", "state_mismatch"},
		{"protocol events without replay", func() obj {
			r := baseRecord()
			r["protocol_events"] = arr{protocolEvent(0, 30, "/api")}
			return finish(r) // finishValid would give it a plan
		}, root + ".protocol_events", "unexpected_replay"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := seal(t, tc.build(), nil)
			_, err := Compare(good, bad, Options{Mode: ModeExact})
			ce := wantError(t, err, CodeInvalidCapture)
			if !hasIssue(ce, "right", tc.path, tc.code) {
				t.Errorf("Compare issues = %v, want %s at %s", ce.Issues, tc.code, tc.path)
			}
			_, err = Diffs(bad, good, 10)
			ce = wantError(t, err, CodeInvalidCapture)
			if !hasIssue(ce, "left", tc.path, tc.code) {
				t.Errorf("Diffs issues = %v, want %s at %s", ce.Issues, tc.code, tc.path)
			}
		})
	}
}

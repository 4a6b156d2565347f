package library

import (
	"encoding/json"
	"strings"

	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
)

// Summary is the index summary of verified Evidence e: its origin, the
// file name when given and, for a process capture, CaptureSummary.
func Summary(e *evidence.Envelope, origin, name string) (json.RawMessage, error) {
	s := map[string]any{"origin": origin}
	if name != "" {
		s["file_name"] = name
	}
	if e.PredicateType == evidence.PredicateProcessCapture {
		var rec record.Record
		if err := json.Unmarshal(e.NormalizedResult, &rec); err != nil {
			return nil, errorf("internal", KindInternal, "summarize verified capture: %v", err)
		}
		for k, v := range CaptureSummary(&rec) {
			s[k] = v
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, errorf("internal", KindInternal, "%v", err)
	}
	return b, nil
}

// CaptureSummary is what the library lists about a capture record: the
// command (at most 300 characters), start, exit, settlement, frame and
// checkpoint counts, truncation and the comparison contract's digest.
func CaptureSummary(rec *record.Record) map[string]any {
	var sc struct {
		Executable string   `json:"executable"`
		Arguments  []string `json:"arguments"`
	}
	_ = json.Unmarshal(rec.Manifest.Scenario, &sc)
	command := strings.Join(append([]string{sc.Executable}, sc.Arguments...), " ")
	return map[string]any{"command": truncate(command, 300), "started_at": rec.Manifest.StartedAt,
		"exit": rec.Exit, "settlement": rec.Settlement.State, "frames": len(rec.Frames),
		"checkpoints": len(rec.FilesystemCheckpoints), "truncated": rec.Truncated,
		"comparison_contract_sha256": rec.Manifest.ComparisonContractSHA256}
}

// truncate cuts s to n runes and an ellipsis (as the app's lists do).
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testjson"

	"github.com/gatehouse/gatehouse/backend/capture/record"
)

// recordJSON runs a real capture with checkpoints, input and a resize and
// returns its record as JSON.
func recordJSON(t *testing.T) []byte {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "keep"), "k")
	script := fmt.Sprintf(`read line; sleep 0.1; echo "got $line"; echo x > %s/new; sleep 0.2; echo bye; sleep 0.1`, root)
	sc, opts := shScenario(t, script, func(m obj) {
		m["filesystem_roots"] = []any{root}
		m["events"] = []any{
			obj{"type": "input", "at_ms": 50, "data": "hi\r"},
			obj{"type": "resize", "at_ms": 100, "columns": 90, "rows": 20},
		}
		m["checkpoints"] = []any{
			obj{"name": "got", "trigger": obj{"type": "terminal_literal", "value": "got hi"}},
			obj{"name": "exited", "trigger": obj{"type": "root_exit"}},
		}
	})
	rec := capture(t, sc, opts)
	if len(rec.Frames) < 2 || len(rec.InteractionEvents) != 2 || len(rec.FilesystemCheckpoints) != 4 {
		t.Fatalf("frames %d, events %d, checkpoints %d", len(rec.Frames), len(rec.InteractionEvents), len(rec.FilesystemCheckpoints))
	}
	return mustJSON(t, rec)
}

// decodeTree decodes the JSON object b with its numbers as json.Number
// (so a mutated tree re-encodes every untouched number as it was).
func decodeTree(t testing.TB, b []byte) map[string]any {
	t.Helper()
	return testjson.Object(t, b)
}

// at walks a path of keys and indices in a decoded tree.
func at(v any, steps ...any) any {
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			a := v.([]any)
			if k < 0 {
				k += len(a)
			}
			v = a[k]
		}
	}
	return v
}

func hasIssue(issues []Issue, code, path string) bool {
	for _, is := range issues {
		if is.Code == code && is.Path == path {
			return true
		}
	}
	return false
}

func TestVerifyRecordAcceptsRealCaptures(t *testing.T) {
	if issues := record.Verify(recordJSON(t)); len(issues) > 0 {
		t.Fatalf("a real capture does not verify: %v", IssueList(issues))
	}
}

func TestVerifyRecordRejectsMutations(t *testing.T) {
	good := recordJSON(t)
	mutate := func(t *testing.T, f func(m map[string]any)) []Issue {
		t.Helper()
		m := decodeTree(t, good)
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return record.Verify(b)
	}
	t.Run("every byte of every commitment", func(t *testing.T) {
		for _, key := range []string{"full_scenario_sha256", "comparison_contract_sha256", "normalization_sha256", "shim_plan_sha256", "replay_plan_sha256"} {
			orig := at(decodeTree(t, good), "manifest", key).(string)
			for i := range len(orig) {
				flipped := []byte(orig)
				flipped[i] = '0'
				if orig[i] == '0' {
					flipped[i] = '1'
				}
				issues := record.Verify(bytes.Replace(good, []byte(`"`+key+`":"`+orig+`"`), []byte(`"`+key+`":"`+string(flipped)+`"`), 1))
				if !hasIssue(issues, record.CodeCommitmentMismatch, "$.manifest."+key) {
					t.Fatalf("%s byte %d: %v", key, i, issues)
				}
			}
		}
		issues := mutate(t, func(m map[string]any) { at(m, "manifest").(map[string]any)["executable_sha256"] = "xyz" })
		if !hasIssue(issues, CodeInvalidValue, "$.manifest.executable_sha256") {
			t.Errorf("executable_sha256: %v", issues)
		}
	})
	t.Run("committed values", func(t *testing.T) {
		issues := mutate(t, func(m map[string]any) { at(m, "manifest", "scenario").(map[string]any)["timeout_ms"] = 29999 })
		if !hasIssue(issues, record.CodeCommitmentMismatch, "$.manifest.full_scenario_sha256") || !hasIssue(issues, record.CodeCommitmentMismatch, "$.manifest.comparison_contract") {
			t.Errorf("scenario: %v", issues)
		}
		issues = mutate(t, func(m map[string]any) { at(m, "normalization").(map[string]any)["pids"] = false })
		if !hasIssue(issues, record.CodeCommitmentMismatch, "$.manifest.normalization_sha256") || !hasIssue(issues, record.CodeCommitmentMismatch, "$.normalization") {
			t.Errorf("normalization: %v", issues)
		}
	})
	t.Run("reordered sequences", func(t *testing.T) {
		for _, list := range []string{"frames", "interaction_events"} {
			issues := mutate(t, func(m map[string]any) {
				a := m[list].([]any)
				a[0], a[1] = a[1], a[0]
			})
			if !hasIssue(issues, record.CodeSequenceGap, "$."+list+"[0].sequence") || !hasIssue(issues, record.CodeSequenceGap, "$."+list+"[1].sequence") {
				t.Errorf("%s: %v", list, issues)
			}
		}
		issues := mutate(t, func(m map[string]any) {
			a := m["event_journal"].([]any)
			a[0], a[1] = a[1], a[0]
		})
		if !hasIssue(issues, record.CodeJournalMismatch, "$.event_journal[0].capture_order") {
			t.Errorf("journal: %v", issues)
		}
		issues = mutate(t, func(m map[string]any) {
			f := m["frames"].([]any)
			f[1].(map[string]any)["at_ms"] = -1
		})
		if !hasIssue(issues, record.CodeTimeOrder, "$.frames[1].at_ms") {
			t.Errorf("frame time: %v", issues)
		}
	})
	t.Run("checkpoints", func(t *testing.T) {
		issues := mutate(t, func(m map[string]any) {
			cps := m["filesystem_checkpoints"].([]any)
			m["filesystem_checkpoints"] = cps[:len(cps)-1]
		})
		if !hasIssue(issues, record.CodeCheckpointOrder, "$.filesystem_checkpoints[2].name") || !hasIssue(issues, record.CodeJournalMismatch, "$.event_journal") {
			t.Errorf("without after_settlement: %v", issues)
		}
		issues = mutate(t, func(m map[string]any) {
			cps := m["filesystem_checkpoints"].([]any)
			m["filesystem_checkpoints"] = cps[1:]
		})
		if !hasIssue(issues, record.CodeCheckpointOrder, "$.filesystem_checkpoints[0].name") {
			t.Errorf("without before: %v", issues)
		}
		issues = mutate(t, func(m map[string]any) { at(m, "filesystem_checkpoints", 1).(map[string]any)["truncated"] = true })
		if !hasIssue(issues, record.CodeTruncationMismatch, "$.truncated") {
			t.Errorf("truncated checkpoint: %v", issues)
		}
		issues = mutate(t, func(m map[string]any) { at(m, "files_after", 0).(map[string]any)["sha256"] = strings.Repeat("0", 64) })
		if !hasIssue(issues, record.CodeStateMismatch, "$.files_after[0].sha256") || !hasIssue(issues, record.CodeStateMismatch, "$.files_after") {
			t.Errorf("directory with a hash: %v", issues)
		}
		issues = mutate(t, func(m map[string]any) {
			at(m, "filesystem_effects", 0).(map[string]any)["before"] = at(m, "files_before", 0)
		})
		if !hasIssue(issues, record.CodeStateMismatch, "$.filesystem_effects[0]") {
			t.Errorf("created with a before: %v", issues)
		}
	})
	t.Run("lifecycle", func(t *testing.T) {
		issues := mutate(t, func(m map[string]any) { at(m, "exit").(map[string]any)["reason"] = ExitReasonTimeout })
		if !hasIssue(issues, record.CodeExitMismatch, "$.exit.code") {
			t.Errorf("exit code with timeout: %v", issues)
		}
		issues = mutate(t, func(m map[string]any) {
			at(m, "manifest").(map[string]any)["completed_at"] = "2000-01-01T00:00:00.000Z"
		})
		if !hasIssue(issues, record.CodeTimeOrder, "$.manifest.completed_at") {
			t.Errorf("completed before started: %v", issues)
		}
		issues = mutate(t, func(m map[string]any) { at(m, "settlement").(map[string]any)["cleanup_outcome"] = CleanupCleaned })
		if !hasIssue(issues, record.CodeStateMismatch, "$.settlement.cleanup_outcome") {
			t.Errorf("settlement: %v", issues)
		}
		issues = mutate(t, func(m map[string]any) {
			j := m["event_journal"].([]any)
			m["event_journal"] = append(j, map[string]any{"capture_order": len(j), "collection": "exit", "index": 0})
		})
		if !hasIssue(issues, record.CodeJournalMismatch, fmt.Sprintf("$.event_journal[%d].index", len(at(decodeTree(t, good), "event_journal").([]any)))) {
			t.Errorf("exit listed twice: %v", issues)
		}
	})
	t.Run("shape", func(t *testing.T) {
		issues := mutate(t, func(m map[string]any) { m["extra"] = 1; delete(m, "cleanup") })
		if !hasIssue(issues, CodeUnknownField, "$.extra") || !hasIssue(issues, CodeMissingField, "$.cleanup") {
			t.Errorf("shape: %v", issues)
		}
		dup := append([]byte(`{"truncated":false,`), good[1:]...)
		if issues := record.Verify(dup); len(issues) != 1 || issues[0].Code != CodeInvalidJSON || issues[0].Path != "$" {
			t.Errorf("duplicate member: %v", issues)
		}
		for _, bad := range []string{"", "null", "[]", "{", `{"schema_version":4}`} {
			if issues := record.Verify(json.RawMessage(bad)); len(issues) == 0 {
				t.Errorf("%q verifies", bad)
			}
		}
	})
}

// syntheticRecord is a valid record built without running anything.
func syntheticRecord(tb testing.TB) []byte {
	tb.Helper()
	sc := parseOK(tb, []byte(seedScenario))
	c, err := sc.Commitments()
	if err != nil {
		tb.Fatal(err)
	}
	rec := newRecord(sc, Options{GatehouseVersion: "t", ProviderVersion: "t"}, c, strings.Repeat("ab", 32))
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	rec.Manifest.StartedAt, rec.Manifest.CompletedAt = now.Format(TimeLayout), now.Add(time.Second).Format(TimeLayout)
	code := 0
	sum := strings.Repeat("cd", 32)
	file := FileState{Path: "<filesystem-root-0>/a", Mode: 0o644, Size: 1, Type: FileTypeFile, SHA256: &sum}
	rec.Frames = []Frame{{Sequence: 0, AtMS: 0, Data: "hi"}, {Sequence: 1, AtMS: 10, Data: "!"}}
	rec.Exit = Exit{Code: &code, Reason: ExitReasonExited}
	rec.Settlement = Settlement{State: SettlementQuiesced, CleanupOutcome: CleanupNotRequired}
	rec.FilesystemCheckpoints = []FilesystemCheckpoint{
		{Name: CheckpointBefore, Files: []FileState{}, Effects: []FileEffect{}},
		{Name: CheckpointAfterSettlement, AtMS: 20, Files: []FileState{file}, Effects: []FileEffect{{Path: file.Path, Status: EffectCreated, After: &file}}},
	}
	rec.FilesAfter = []FileState{file}
	rec.FilesystemEffects = []FileEffect{{Path: file.Path, Status: EffectCreated, After: &file}}
	for _, e := range []JournalEntry{{CaptureOrder: 0, Collection: "filesystem_checkpoints", Index: 0}, {CaptureOrder: 1, Collection: "frames", Index: 0}, {CaptureOrder: 2, Collection: "frames", Index: 1}, {CaptureOrder: 3, Collection: "exit", Index: 0}, {CaptureOrder: 4, Collection: "settlement", Index: 0}, {CaptureOrder: 5, Collection: "filesystem_checkpoints", Index: 1}} {
		rec.EventJournal = append(rec.EventJournal, e)
	}
	rec.Cleanup = Cleanup{OwnedProcessGroup: OwnedProcessGroupVerified, TemporaryRoot: TemporaryRootRemoved}
	b, err := json.Marshal(rec)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestVerifyRecordSynthetic(t *testing.T) {
	if issues := record.Verify(syntheticRecord(t)); len(issues) > 0 {
		t.Fatal(IssueList(issues))
	}
}

func FuzzVerifyRecord(f *testing.F) {
	good := syntheticRecord(f)
	f.Add(good)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"event_journal":[{"capture_order":0,"collection":"exit","index":0}],"exit":{"code":1,"reason":"timeout","signal":null}}`))
	f.Add(bytes.Replace(good, []byte(`"sequence":1`), []byte(`"sequence":7`), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		issues := record.Verify(data)
		if len(issues) > MaxIssues {
			t.Fatalf("%d issues", len(issues))
		}
		for _, is := range issues {
			if !strings.HasPrefix(is.Path, "$") || is.Code == "" {
				t.Fatalf("malformed issue %+v", is)
			}
		}
		again := record.Verify(data)
		if fmt.Sprint(again) != fmt.Sprint(issues) {
			t.Fatalf("not deterministic: %v then %v", issues, again)
		}
	})
}

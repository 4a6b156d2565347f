package record

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// benchRecord is a record Verify accepts with n journaled observations
// (frames, rendered frames, interaction events, process samples) whose
// frames carry dataLen bytes each, escapes included.
func benchRecord(tb testing.TB, n, dataLen int) []byte {
	tb.Helper()
	digest := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		d, err := evidence.DigestJSON(b)
		if err != nil {
			tb.Fatal(err)
		}
		return d
	}
	norm := json.RawMessage(`{"pids":true}`)
	shims := json.RawMessage(`[{"name":"git","routes":[{"max_calls":1000000}]}]`)
	scenario := map[string]json.RawMessage{
		"executable": json.RawMessage(`"/bin/sh"`), "arguments": json.RawMessage(`["-c","x"]`),
		"environment": json.RawMessage(`{"B":"1","A":"2"}`), "normalization": norm,
		"command_shims": shims, "replay": json.RawMessage(`null`), "reactive": json.RawMessage(`null`),
	}
	contract := map[string]json.RawMessage{"normalization": norm, "command_shims": shims,
		"replay": json.RawMessage(`null`), "reactive": json.RawMessage(`null`), "environment_names": json.RawMessage(`["A","B"]`)}
	sc, _ := json.Marshal(scenario)
	cc, _ := json.Marshal(contract)
	r := Record{SchemaVersion: SchemaVersion, Normalization: norm, ReactiveRun: json.RawMessage(`null`),
		Limitations: []string{"a limitation"}, ResidualUnknowns: []ResidualUnknown{{Scope: "s", Reason: "r"}},
		ShimEvents: []json.RawMessage{}, ProtocolEvents: []json.RawMessage{}, ReplayTransitions: []json.RawMessage{}}
	r.Manifest = Manifest{GatehouseVersion: "t", ProviderVersion: "t", Platform: "linux", Architecture: "amd64", PTYBackend: "creack/pty",
		StartedAt: "2026-01-02T03:04:05.000Z", CompletedAt: "2026-01-02T03:04:06.000Z",
		Scenario: sc, ComparisonContract: cc, ShimPlan: shims, ReplayPlan: json.RawMessage(`null`),
		FullScenarioSHA256: digest(scenario), ComparisonContractSHA256: digest(contract), ExecutableSHA256: strings.Repeat("ab", 32),
		NormalizationSHA256: digest(norm), ShimPlanSHA256: digest(shims), ReplayPlanSHA256: digest(nil)}
	data := strings.Repeat("out \x1b[31mred\x1b[0m é \"q\" \\ ", dataLen/24+1)[:dataLen]
	journal := func(c string, i int) {
		r.EventJournal = append(r.EventJournal, JournalEntry{CaptureOrder: len(r.EventJournal), Collection: c, Index: i})
	}
	journal("filesystem_checkpoints", 0)
	pg := 7
	for i := range n {
		switch i % 5 {
		case 0, 1:
			journal("frames", len(r.Frames))
			r.Frames = append(r.Frames, Frame{Sequence: len(r.Frames), AtMS: i, Data: fmt.Sprintf("%d %s", i, data)})
		case 2:
			journal("rendered_frames", len(r.RenderedFrames))
			r.RenderedFrames = append(r.RenderedFrames, RenderedFrame{Sequence: len(r.RenderedFrames), AtMS: i, Columns: 80, Rows: 2,
				ActiveBuffer: BufferNormal, Lines: []string{fmt.Sprintf("line %d", i), ""}, SerializedState: "\x1b[1;1Hx"})
		case 3:
			journal("interaction_events", len(r.InteractionEvents))
			r.InteractionEvents = append(r.InteractionEvents, InteractionEvent{Sequence: len(r.InteractionEvents), ScheduledAtMS: i,
				DispatchedAtMS: i, Type: "input", Data: "<redacted-input:2-bytes>", Outcome: OutcomeDispatched})
		case 4:
			journal("process_samples", len(r.ProcessSamples))
			r.ProcessSamples = append(r.ProcessSamples, ProcessSample{AtMS: i, PID: 100 + i%50, ParentPID: 1, Command: "node", ProcessGroupID: &pg})
		}
	}
	code := 0
	r.Exit = Exit{Code: &code, Reason: ExitReasonExited}
	r.Settlement = Settlement{State: SettlementQuiesced, CleanupOutcome: CleanupNotRequired}
	journal("exit", 0)
	journal("settlement", 0)
	sum := strings.Repeat("cd", 32)
	file := FileState{Path: "<filesystem-root-0>/a", Mode: 0o644, Size: 1, Type: FileTypeFile, SHA256: &sum}
	r.FilesystemCheckpoints = []FilesystemCheckpoint{
		{Name: CheckpointBefore, Files: []FileState{}, Effects: []FileEffect{}},
		{Name: CheckpointAfterSettlement, AtMS: n + 100, Files: []FileState{file}, Effects: []FileEffect{{Path: file.Path, Status: EffectCreated, After: &file}}},
	}
	journal("filesystem_checkpoints", 1)
	r.FilesBefore, r.FilesAfter = []FileState{}, []FileState{file}
	r.FilesystemEffects = []FileEffect{{Path: file.Path, Status: EffectCreated, After: &file}}
	r.Cleanup = Cleanup{OwnedProcessGroup: OwnedProcessGroupVerified, TemporaryRoot: TemporaryRootRemoved}
	b, err := json.Marshal(r)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestBenchRecordHolds(t *testing.T) {
	if issues := Verify(benchRecord(t, 50, 40)); len(issues) > 0 {
		t.Fatal(issues)
	}
}

// BenchmarkVerify verifies a 10,000-event record and one of about 10 MB,
// with Verify and with the verifier before it was made fast (the oracle
// of TestVerifyMatchesOracle), so the two compare under the same load.
func BenchmarkVerify(b *testing.B) {
	for _, impl := range []struct {
		name   string
		verify func(json.RawMessage) []Issue
	}{{"verifier=now", Verify}, {"verifier=oracle", oracleVerify}} {
		b.Run(impl.name, func(b *testing.B) { benchVerify(b, impl.verify) })
	}
}

func benchVerify(b *testing.B, verify func(json.RawMessage) []Issue) {
	for _, c := range []struct {
		name    string
		n, data int
	}{{"events=10000", 10_000, 16}, {"size=10MB", 10_000, 2_500}} {
		b.Run(c.name, func(b *testing.B) {
			raw := benchRecord(b, c.n, c.data)
			if issues := Verify(raw); len(issues) > 0 {
				b.Fatal(issues[0])
			}
			b.SetBytes(int64(len(raw)))
			b.ResetTimer()
			for b.Loop() {
				verify(raw)
			}
		})
	}
}

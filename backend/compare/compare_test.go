package compare

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

func mustCompare(t *testing.T, l, r *evidence.Envelope, opts Options) Result {
	t.Helper()
	res, err := Compare(l, r, opts)
	if err != nil {
		t.Fatalf("Compare: %v", err)
	}
	return res
}

func wantStatuses(t *testing.T, res Result, overall Status, dims map[string]Status) {
	t.Helper()
	if res.Status != overall {
		t.Errorf("status = %s, want %s", res.Status, overall)
	}
	for _, v := range res.DimensionViews() {
		want, ok := dims[v.Name]
		if !ok {
			want = Unchanged
		}
		if v.Status != want {
			t.Errorf("%s = %s, want %s", v.Name, v.Status, want)
		}
	}
}

func wantError(t *testing.T, err error, code string) *Error {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *compare.Error", err)
	}
	if ce.Code != code {
		t.Fatalf("code = %s, want %s (%v)", ce.Code, code, err)
	}
	if ce.Message == "" || ce.Remediation == "" || ce.Category != CategoryInvalid || ce.Retryable {
		t.Errorf("incomplete structured error: %+v", ce)
	}
	return ce
}

func hasIssue(ce *Error, side, path, code string) bool {
	for _, is := range ce.Issues {
		if is.Side == side && is.Path == path && (code == "" || is.Code == code) {
			return true
		}
	}
	return false
}

func TestIdenticalCapturesAreUnchanged(t *testing.T) {
	e := env(t, baseRecord())
	res := mustCompare(t, e, e, Options{Mode: ModeExact})
	wantStatuses(t, res, Unchanged, nil)
	if res.FirstDivergence.Status != DivergenceNone {
		t.Errorf("first divergence = %+v, want none", res.FirstDivergence)
	}
	b, _ := json.Marshal(res.FirstDivergence)
	if string(b) != `{"status":"none"}` {
		t.Errorf("first divergence JSON = %s", b)
	}
	if res.Trace != nil {
		t.Error("trace set without a trace spec")
	}
}

func TestMemberOrderIsIrrelevant(t *testing.T) {
	rec := finishValid(baseRecord())
	l := seal(t, rec, nil)
	r := seal(t, rec, marshalReversed)
	if l.EvidenceID == r.EvidenceID {
		// The ids commit to canonical JSON, so they are equal; the raw
		// normalized_result bytes differ, which is what matters here.
		if string(l.NormalizedResult) == string(r.NormalizedResult) {
			t.Fatal("fixtures did not change member order")
		}
	}
	wantStatuses(t, mustCompare(t, l, r, Options{Mode: ModeExact}), Unchanged, nil)
	// Numbers compare as doubles: 5 and 5.0 are the same at_ms.
	raw := strings.Replace(string(r.NormalizedResult), `"at_ms":5,`, `"at_ms":5.0,`, 1)
	if raw == string(r.NormalizedResult) {
		t.Fatal("no at_ms to respell")
	}
	r2 := *r
	r2.NormalizedResult = json.RawMessage(raw)
	wantStatuses(t, mustCompare(t, l, &r2, Options{Mode: ModeExact}), Unchanged, nil)
}

func TestCarriageReturnChangesTerminal(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	lr["frames"] = arr{frame(0, 5, "bar")}
	rr["frames"] = arr{frame(0, 5, "foo\rbar")}
	lr["rendered_frames"], rr["rendered_frames"] = arr{rendered(0, 5, "bar")}, arr{rendered(0, 5, "bar")}
	res := mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantStatuses(t, res, Changed, map[string]Status{"terminal": Changed})
	fd := res.FirstDivergence
	if fd.Status != DivergenceFound || fd.Dimension != "terminal" || fd.Index != 0 {
		t.Fatalf("first divergence = %+v", fd)
	}
	if fd.LeftAtMS == nil || *fd.LeftAtMS != 5 || fd.RightAtMS == nil || *fd.RightAtMS != 5 {
		t.Errorf("times = %v, %v", fd.LeftAtMS, fd.RightAtMS)
	}
	if fd.Left.(map[string]any)["data"] != "bar" || fd.Right.(map[string]any)["data"] != "foo\rbar" {
		t.Errorf("values = %v / %v", fd.Left, fd.Right)
	}
	if fd.LeftLocation != "$.normalized_result.frames[0]" || fd.RightLocation != "$.normalized_result.frames[0]" {
		t.Errorf("locations = %s, %s", fd.LeftLocation, fd.RightLocation)
	}
	var m map[string]any
	b, _ := json.Marshal(fd)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"status", "dimension", "index", "left_at_ms", "right_at_ms", "left", "right"} {
		if _, ok := m[k]; !ok {
			t.Errorf("first divergence JSON lacks %s: %s", k, b)
		}
	}
}

func TestTerminalMergeOrder(t *testing.T) {
	// Raw before rendered at the same at_ms, then by sequence.
	r := &record{lists: map[string][]any{
		"frames":          {frame(0, 5, "a"), frame(1, 7, "b")},
		"rendered_frames": {rendered(0, 5, "a"), rendered(1, 6, "a"), rendered(2, 7, "b")},
	}}
	for _, name := range []string{"frames", "rendered_frames"} {
		for i, it := range r.lists[name] {
			r.lists[name][i] = clone(obj{"x": it})["x"] // ints → json.Number, as decoded
			r.lists[name][i] = toNumbers(r.lists[name][i])
		}
	}
	got := r.observations()[dimTerminal]
	want := []string{"frames[0]", "rendered_frames[0]", "rendered_frames[1]", "frames[1]", "rendered_frames[2]"}
	if len(got) != len(want) {
		t.Fatalf("merged %d items, want %d", len(got), len(want))
	}
	for i, o := range got {
		if loc := strings.TrimPrefix(o.location(nil), root+"."); loc != want[i] {
			t.Errorf("item %d = %s, want %s", i, loc, want[i])
		}
	}
}

// toNumbers re-decodes v so numbers are json.Number, as Compare sees them.
func toNumbers(v any) any {
	b, _ := json.Marshal(v)
	out, _ := decodeJSON(string(b))
	return out
}

func TestExtraCheckpointChangesFilesystem(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	rr["filesystem_checkpoints"] = arr{checkpoint("before", 0), checkpoint("ready", 50), checkpoint("after_settlement", 200)}
	res := mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantStatuses(t, res, Changed, map[string]Status{"filesystem": Changed})
	fd := res.FirstDivergence
	if fd.Dimension != "filesystem" || fd.Index != 1 || *fd.LeftAtMS != 200 || *fd.RightAtMS != 50 {
		t.Errorf("first divergence = %+v", fd)
	}
}

func TestFinalFileStateCounts(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	lr["files_after"] = arr{fileState("<filesystem-root-0>/a", strings.Repeat("a", 64))}
	rr["files_after"] = arr{fileState("<filesystem-root-0>/a", strings.Repeat("b", 64))}
	res := mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantStatuses(t, res, Changed, map[string]Status{"filesystem": Changed})
	// files_after is the last checkpoint's files: that checkpoint differs first
	if fd := res.FirstDivergence; fd.Index != 1 || fd.LeftLocation != root+".filesystem_checkpoints[1]" || *fd.LeftAtMS != 200 {
		t.Errorf("first divergence = %+v", fd)
	}
	rr["files_after"] = arr{}
	rr["filesystem_effects"] = arr{obj{"path": "<filesystem-root-0>/a", "status": "created", "before": nil, "after": fileState("<filesystem-root-0>/a", "a")}}
	res = mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	if fd := res.FirstDivergence; fd.LeftLocation != root+".filesystem_checkpoints[1]" {
		t.Errorf("first divergence = %+v", fd)
	}
}

func TestResidualUnknownMakesDimensionUnknown(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	rr["residual_unknowns"] = arr{obj{"scope": "process", "reason": "process samples may miss short-lived descendants"}}
	res := mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantStatuses(t, res, Unknown, map[string]Status{"process": Unknown})
	fd := res.FirstDivergence
	if fd.Status != DivergenceUnknown || !strings.Contains(fd.Reason, "process") {
		t.Errorf("first divergence = %+v", fd)
	}
	if len(res.Limitations) == 0 || !strings.Contains(strings.Join(res.Limitations, "\n"), "short-lived") {
		t.Errorf("limitations = %q", res.Limitations)
	}
	// A difference inside the unknown dimension stays unknown.
	rr["process_samples"] = arr{sample(0, 101, "bash")}
	res = mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantStatuses(t, res, Unknown, map[string]Status{"process": Unknown})
	// A residual unknown never hides an observed difference elsewhere.
	rr["frames"] = arr{frame(0, 5, "other")}
	res = mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantStatuses(t, res, Changed, map[string]Status{"process": Unknown, "terminal": Changed})
	if res.FirstDivergence.Dimension != "terminal" {
		t.Errorf("first divergence = %+v", res.FirstDivergence)
	}
}

func TestResidualUnknownWithForeignScopeCoversEverything(t *testing.T) {
	lr := baseRecord()
	lr["residual_unknowns"] = arr{obj{"scope": "kernel", "reason": "?"}}
	res := mustCompare(t, env(t, lr), env(t, baseRecord()), Options{Mode: ModeExact})
	all := map[string]Status{}
	for _, d := range Dimensions() {
		all[d] = Unknown
	}
	wantStatuses(t, res, Unknown, all)
}

func TestNormalizationDifferenceIsAnotherContract(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	n := testNormalization()
	n["time_bucket_ms"] = 100
	rr["normalization"] = n // the normalization is part of the contract
	_, err := Compare(env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantError(t, err, CodeIncompatibleContracts)
}

func TestOneSidedFramesAreAddedOrRemoved(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	lr["frames"], lr["rendered_frames"] = arr{}, arr{}
	res := mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantStatuses(t, res, Changed, map[string]Status{"terminal": Added})
	fd := res.FirstDivergence
	if fd.Left != nil || fd.LeftAtMS != nil || fd.LeftLocation != "" || fd.Right == nil || *fd.RightAtMS != 5 {
		t.Errorf("first divergence = %+v", fd)
	}
	b, _ := json.Marshal(fd)
	if !strings.Contains(string(b), `"left":null`) || !strings.Contains(string(b), `"left_at_ms":null`) {
		t.Errorf("JSON = %s", b)
	}
	res = mustCompare(t, env(t, rr), env(t, lr), Options{Mode: ModeExact})
	wantStatuses(t, res, Changed, map[string]Status{"terminal": Removed})
}

func TestTruncatedEitherSideTruncatesEverything(t *testing.T) {
	for _, side := range []string{"left", "right", "both"} {
		lr, rr := baseRecord(), baseRecord()
		rr["frames"] = arr{frame(0, 5, "different")}
		if side != "right" {
			lr["truncated"] = true
		}
		if side != "left" {
			rr["truncated"] = true
		}
		res := mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
		all := map[string]Status{}
		for _, d := range Dimensions() {
			all[d] = Truncated
		}
		wantStatuses(t, res, Truncated, all)
		if fd := res.FirstDivergence; fd.Status != DivergenceUnknown || fd.Reason != ReasonTruncated {
			t.Errorf("%s: first divergence = %+v", side, fd)
		}
	}
	// A truncated checkpoint in a truncated capture is fine.
	lr := baseRecord()
	lr["truncated"] = true
	lr["filesystem_checkpoints"].(arr)[1].(obj)["truncated"] = true
	wantStatuses(t, mustCompare(t, env(t, lr), env(t, baseRecord()), Options{Mode: ModeExact}), Truncated, map[string]Status{
		"terminal": Truncated, "interaction": Truncated, "exit": Truncated, "filesystem": Truncated,
		"protocol": Truncated, "process": Truncated, "shim": Truncated})
}

func TestExitComparesExitAndSettlement(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	rr["settlement"] = obj{"state": "alive_at_deadline", "elapsed_ms": 100, "cleanup_outcome": "cleaned"}
	res := mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantStatuses(t, res, Changed, map[string]Status{"exit": Changed})
	fd := res.FirstDivergence
	if fd.Dimension != "exit" || fd.LeftAtMS != nil || fd.RightAtMS != nil || fd.LeftLocation != root+".settlement" {
		t.Errorf("first divergence = %+v", fd)
	}
	rr = baseRecord()
	rr["exit"] = obj{"code": 1, "signal": nil, "reason": "exited"}
	res = mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	if fd := res.FirstDivergence; fd.Dimension != "exit" || fd.LeftLocation != root+".exit" {
		t.Errorf("first divergence = %+v", fd)
	}
}

func TestFirstDivergenceIsEarliestAcrossDimensions(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	lr["frames"] = arr{frame(0, 5, "a"), frame(1, 50, "b")}
	rr["frames"] = arr{frame(0, 5, "a"), frame(1, 50, "c")}
	lr["process_samples"] = arr{sample(0, 100, "sh"), sample(10, 101, "git")}
	rr["process_samples"] = arr{sample(0, 100, "sh"), sample(10, 101, "hg")}
	res := mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	if fd := res.FirstDivergence; fd.Dimension != "process" || fd.Index != 1 {
		t.Errorf("first divergence = %+v", fd)
	}
	// Equal times: terminal wins the tie.
	rr["process_samples"] = arr{sample(0, 100, "sh"), sample(50, 101, "hg")}
	lr["process_samples"] = arr{sample(0, 100, "sh"), sample(50, 101, "git")}
	res = mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	if fd := res.FirstDivergence; fd.Dimension != "terminal" || fd.Index != 2 { // frames[0], rendered[0], frames[1]
		t.Errorf("first divergence = %+v", fd)
	}
	// min(left, right): a right-side item earlier than both left ones.
	lr, rr = baseRecord(), baseRecord()
	lr["shim_events"] = arr{shimEvent(0, 90, "codex")}
	rr["shim_events"] = arr{shimEvent(0, 1, "codex")}
	lr["interaction_events"] = arr{interaction(0, 20, "x\r")}
	rr["interaction_events"] = arr{interaction(0, 20, "y\r")}
	res = mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
	if fd := res.FirstDivergence; fd.Dimension != "shim" || *fd.RightAtMS != 1 || *fd.LeftAtMS != 90 {
		t.Errorf("first divergence = %+v", fd)
	}
	// Protocol is protocol events, then replay transitions; the earliest
	// differing one wins even when it comes later in that list.
	lr, rr = baseRecord(), baseRecord()
	lr["protocol_events"] = arr{committed(protocolEvent(0, 80, "/a"))}
	rr["protocol_events"] = arr{committed(protocolEvent(0, 80, "/b"))}
	lr["replay_transitions"] = arr{transition(0, 30, "t1")}
	rr["replay_transitions"] = arr{transition(0, 30, "t2")}
	el, er := envPair(t, lr, rr)
	res = mustCompare(t, el, er, Options{Mode: ModeExact})
	if fd := res.FirstDivergence; fd.Dimension != "protocol" || fd.Index != 1 || fd.LeftLocation != root+".replay_transitions[0]" {
		t.Errorf("first divergence = %+v", fd)
	}
}

func TestIncompatibleContracts(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	c := testContract()
	c["timeout_ms"] = 1000
	rr["manifest"].(obj)["comparison_contract"] = c
	_, err := Compare(env(t, lr), env(t, rr), Options{Mode: ModeExact})
	ce := wantError(t, err, CodeIncompatibleContracts)
	if ce.Message != "incompatible comparison contracts" || len(ce.Issues) != 2 {
		t.Errorf("error = %+v", ce)
	}
	// Different executables under one contract compare fine.
	rr = baseRecord()
	rr["manifest"].(obj)["scenario"] = obj{"approved": true, "executable": "/bin/bash"}
	mustCompare(t, env(t, lr), env(t, rr), Options{Mode: ModeExact})
}

func TestMaxCaptureAge(t *testing.T) {
	l, r := env(t, baseRecord()), env(t, baseRecord())
	completed := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	clock := func(d time.Duration) func() time.Time { return func() time.Time { return completed.Add(d) } }
	res := mustCompare(t, l, r, Options{Mode: ModeExact, MaxCaptureAgeMS: 1000, Now: clock(1000 * time.Millisecond)})
	if res.params.MaxCaptureAgeMS == nil || *res.params.MaxCaptureAgeMS != 1000 || res.params.CheckedAt == nil {
		t.Errorf("parameters = %+v", res.params)
	}
	_, err := Compare(l, r, Options{Mode: ModeExact, MaxCaptureAgeMS: 1000, Now: clock(1001 * time.Millisecond)})
	ce := wantError(t, err, CodeStaleCapture)
	if !hasIssue(ce, "left", root+".manifest.completed_at", "too_old") || !hasIssue(ce, "right", root+".manifest.completed_at", "too_old") {
		t.Errorf("issues = %v", ce.Issues)
	}
	// Only the stale side is named.
	rr := baseRecord()
	rr["manifest"].(obj)["completed_at"] = "2026-01-01T00:00:05.000Z"
	_, err = Compare(l, env(t, rr), Options{Mode: ModeExact, MaxCaptureAgeMS: 1000, Now: clock(2 * time.Second)})
	ce = wantError(t, err, CodeStaleCapture)
	if len(ce.Issues) != 1 || ce.Issues[0].Side != "left" {
		t.Errorf("issues = %v", ce.Issues)
	}
	_, err = Compare(l, r, Options{Mode: ModeExact, MaxCaptureAgeMS: -1})
	wantError(t, err, CodeInvalidRequest)
	_, err = Compare(nil, r, Options{Mode: ModeExact})
	wantError(t, err, CodeInvalidRequest)
}

func TestSchemaVersions(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	rr["schema_version"] = 3
	_, err := Compare(env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantError(t, err, CodeIncompatibleSchemaVersions)
	lr["schema_version"] = 3
	_, err = Compare(env(t, lr), env(t, rr), Options{Mode: ModeExact})
	wantError(t, err, CodeUnsupportedSchemaVersion)
}

func TestInvalidRecordsAreRejectedWithEveryPath(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(r obj)
		path   string
		code   string
	}{
		{"sequence gap", func(r obj) { r["frames"] = arr{frame(0, 5, "a"), frame(2, 6, "b")} }, root + ".frames[1].sequence", "sequence_gap"},
		{"time goes back", func(r obj) { r["frames"] = arr{frame(0, 5, "a"), frame(1, 4, "b")} }, root + ".frames[1].at_ms", "time_order"},
		{"exit code without exited", func(r obj) { r["exit"] = obj{"code": 0, "signal": nil, "reason": "timeout"} }, root + ".exit.code", "exit_mismatch"},
		{"settlement cleanup", func(r obj) {
			r["settlement"] = obj{"state": "quiesced", "elapsed_ms": 1, "cleanup_outcome": "cleaned"}
		}, root + ".settlement.cleanup_outcome", "state_mismatch"},
		{"first checkpoint", func(r obj) { r["filesystem_checkpoints"] = arr{checkpoint("after_settlement", 0)} }, root + ".filesystem_checkpoints[0].name", "checkpoint_order"},
		{"last checkpoint", func(r obj) { r["filesystem_checkpoints"] = arr{checkpoint("before", 0)} }, root + ".filesystem_checkpoints[0].name", "checkpoint_order"},
		{"truncated checkpoint", func(r obj) { r["filesystem_checkpoints"].(arr)[0].(obj)["truncated"] = true }, root + ".truncated", "truncation_mismatch"},
		{"missing field", func(r obj) { delete(r, "process_samples") }, root + ".process_samples", "missing_field"},
		{"wrong type", func(r obj) { r["truncated"] = "no" }, root + ".truncated", "wrong_type"},
		{"bad enum", func(r obj) { r["interaction_events"].(arr)[0].(obj)["type"] = "typing" }, root + ".interaction_events[0].type", "invalid_value"},
		{"completed before started", func(r obj) { r["manifest"].(obj)["started_at"] = "2026-01-01T00:00:02.000Z" }, root + ".manifest.completed_at", "time_order"},
		{"shim max_calls", func(r obj) {
			r["shim_events"] = arr{shimEvent(0, 1, "codex"), shimEvent(1, 2, "codex"), shimEvent(2, 3, "codex")}
		}, root + ".shim_events[2]", "shim_overuse"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := baseRecord()
			tc.mutate(bad)
			_, err := Compare(env(t, baseRecord()), env(t, bad), Options{Mode: ModeExact})
			ce := wantError(t, err, CodeInvalidCapture)
			if !hasIssue(ce, "right", tc.path, tc.code) {
				t.Errorf("issues = %v, want %s at %s", ce.Issues, tc.code, tc.path)
			}
		})
	}
}

func TestCommitmentsAndJournalAreRechecked(t *testing.T) {
	// A commitment that does not match its value (finish not re-run).
	bad := finishValid(baseRecord())
	bad["manifest"].(obj)["shim_plan"] = arr{}
	_, err := Compare(env(t, baseRecord()), seal(t, bad, nil), Options{Mode: ModeExact})
	ce := wantError(t, err, CodeInvalidCapture)
	if !hasIssue(ce, "right", root+".manifest.shim_plan_sha256", "commitment_mismatch") {
		t.Errorf("issues = %v", ce.Issues)
	}
	// A journal that misses an observation and repeats another.
	bad = finishValid(baseRecord())
	for _, e := range bad["event_journal"].(arr) {
		if e.(obj)["collection"] == "frames" {
			e.(obj)["collection"] = "rendered_frames"
		}
	}
	_, err = Compare(seal(t, bad, nil), env(t, baseRecord()), Options{Mode: ModeExact})
	ce = wantError(t, err, CodeInvalidCapture)
	if !hasIssue(ce, "left", root+".event_journal", "journal_mismatch") {
		t.Errorf("issues = %v", ce.Issues)
	}
	// An empty journal is allowed (older captures); it only limits traces.
	ok := finishValid(baseRecord())
	ok["event_journal"] = arr{}
	wantStatuses(t, mustCompare(t, seal(t, ok, nil), env(t, baseRecord()), Options{Mode: ModeExact}), Unchanged, nil)
}

func TestNotACaptureIsRejected(t *testing.T) {
	e := env(t, baseRecord())
	other := *e
	other.PredicateType = "example.other/v1"
	_, err := Compare(&other, e, Options{Mode: ModeExact})
	ce := wantError(t, err, CodeInvalidCapture)
	if !hasIssue(ce, "left", "$.predicate_type", "not_a_capture") {
		t.Errorf("issues = %v", ce.Issues)
	}
	garbled := *e
	garbled.NormalizedResult = json.RawMessage(`[1,2]`)
	_, err = Compare(e, &garbled, Options{Mode: ModeExact})
	wantError(t, err, CodeInvalidCapture)
}

func TestIssuesAreBounded(t *testing.T) {
	bad := baseRecord()
	var frames arr
	for i := range 500 {
		frames = append(frames, frame(i+1, 0, "x"))
	}
	bad["frames"] = frames
	_, err := Compare(env(t, bad), env(t, baseRecord()), Options{Mode: ModeExact})
	ce := wantError(t, err, CodeInvalidCapture)
	if len(ce.Issues) > maxIssuesPerSide+1 {
		t.Errorf("%d issues", len(ce.Issues))
	}
}

func TestEnvelope(t *testing.T) {
	lr, rr := baseRecord(), baseRecord()
	rr["frames"] = arr{frame(0, 5, "bye")}
	l, r := env(t, lr), env(t, rr)
	res := mustCompare(t, l, r, Options{Mode: ModeExact})
	e, err := Envelope(res, l, r)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	back, issues := evidence.Parse(data)
	if len(issues) > 0 {
		t.Fatalf("Parse: %v", issues)
	}
	if back.PredicateType != evidence.PredicateProcessComparison || back.Operation != evidence.OperationCompareProcesses ||
		back.Confidence != evidence.Derived || back.Authority != evidence.AuthorityAnalystInference {
		t.Errorf("envelope = %+v", back)
	}
	if len(back.EvidenceLinks) != 2 || back.EvidenceLinks[0] != l.EvidenceID || back.EvidenceLinks[1] != r.EvidenceID {
		t.Errorf("links = %v", back.EvidenceLinks)
	}
	if len(back.Locations) != 2 {
		t.Errorf("locations = %s", back.Locations)
	}
	var norm map[string]any
	if err := json.Unmarshal(back.NormalizedResult, &norm); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"status", "terminal", "interaction", "exit", "filesystem", "protocol", "process", "shim", "first_divergence", "limitations"} {
		if _, ok := norm[k]; !ok {
			t.Errorf("normalized_result lacks %s", k)
		}
	}
	if _, ok := norm["trace"]; ok {
		t.Error("trace present without a trace spec")
	}
	var params map[string]any
	json.Unmarshal(back.Parameters, &params)
	if params["max_capture_age_ms"] != nil || params["trace_spec"] != nil {
		t.Errorf("parameters = %v", params)
	}
	// Deterministic: the same comparison seals to the same id.
	e2, _ := Envelope(mustCompare(t, l, r, Options{Mode: ModeExact}), l, r)
	if e2.EvidenceID != e.EvidenceID {
		t.Error("comparison Evidence is not deterministic")
	}
	if _, err := Envelope(res, nil, r); err == nil {
		t.Error("nil capture accepted")
	}
}

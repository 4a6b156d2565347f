package app

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/compare"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/policy"
)

// stepScript prints three steps (the third names $1), then "done" after a
// pause; with a 1000 ms time bucket the steps are all at 0 ms.
const stepScript = `printf 'step 1\n'; sleep 0.2; printf 'step 2\n'; sleep 0.2; printf 'step 3 %s\n' "$1"; sleep 1.2; printf 'done\n'`

const stepTrace = `{"version": 1, "events": [
 {"id": "step1", "source": "terminal_raw", "exact": {"data": "step 1\r\n"}, "ignore_fields": ["sequence", "at_ms"]},
 {"id": "step2", "source": "terminal_raw", "exact": {"data": "step 2\r\n"}, "ignore_fields": ["sequence", "at_ms"]},
 {"id": "step3", "source": "terminal_raw", "exact": {"data": "step 3 alpha\r\n"}, "ignore_fields": ["sequence", "at_ms"]},
 {"id": "done", "source": "terminal_raw", "exact": {"data": "done\r\n"}, "ignore_fields": ["sequence", "at_ms"]}],
 "language": {"kind": "partial_order", "happens_before": [{"before": "step1", "after": "step2"},
   {"before": "step2", "after": "step3"}, {"before": "step3", "after": "done"}]}}`

// cmpCapture makes one real capture of stepScript with word as $1 and
// saves it in the test server's library; it returns the evidence id.
// Captures in the same work directory share a comparison contract.
func cmpCapture(t *testing.T, ts *testServer, work, word string) string {
	t.Helper()
	doc, _ := json.Marshal(map[string]any{"approved": true, "executable": "/bin/sh", "arguments": []string{"-c", stepScript, "sh", word},
		"working_directory": work, "environment": map[string]string{"PATH": "/usr/bin:/bin"},
		"terminal": map[string]any{"columns": 40, "rows": 6}, "normalization": map[string]any{"time_bucket_ms": 1000}})
	sc, issues := capture.ParseScenario(doc)
	if len(issues) > 0 {
		t.Fatalf("scenario: %v", issues)
	}
	pol := policy.DefaultCaptureSettings()
	pol.Enabled, pol.AllowExternalNetwork = true, true
	pol.ExecutableRoots, pol.WorkingRoots, pol.AllowedEnv = []string{"/bin", "/usr/bin"}, []string{work}, []string{"PATH"}
	f := ts.facade
	_, ev, _, _, err := captureAndSave(f.ctx, f.env, f.sup, &f.renderers, sc, pol)
	if err != nil {
		t.Fatal(err)
	}
	return ev.EvidenceID
}

type cmpResult struct {
	Status          string `json:"status"`
	Terminal        string `json:"terminal"`
	FirstDivergence struct {
		Status        string `json:"status"`
		Dimension     string `json:"dimension"`
		Index         int    `json:"index"`
		LeftAtMS      *int   `json:"left_at_ms"`
		LeftLocation  string `json:"left_location"`
		RightLocation string `json:"right_location"`
	} `json:"first_divergence"`
	Trace *struct {
		Verdict    string `json:"verdict"`
		Diagnostic struct {
			Kind      string   `json:"kind"`
			Side      string   `json:"side"`
			Locations []string `json:"locations"`
		} `json:"diagnostic"`
	} `json:"trace"`
}

func decodeResult(t *testing.T, v ComparisonView) cmpResult {
	t.Helper()
	var r cmpResult
	if err := json.Unmarshal(v.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func detailPaths(t *testing.T, e cliErr) string {
	t.Helper()
	var issues []struct {
		Path string `json:"path"`
		Line *int   `json:"line"`
	}
	if err := json.Unmarshal(e.Details, &issues); err != nil {
		t.Fatalf("details %s: %v", e.Details, err)
	}
	var out []string
	for _, is := range issues {
		out = append(out, is.Path)
	}
	return strings.Join(out, ",")
}

func TestCompareCapturesOverTheBridge(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	alpha, bravo := cmpCapture(t, ts, work, "alpha"), cmpCapture(t, ts, work, "bravo")

	v, status, e := apiCall[ComparisonView](t, ts, "CompareCaptures", map[string]any{"left": alpha, "right": bravo, "traceSpec": stepTrace, "save": true, "mode": "exact"})
	if status != 200 {
		t.Fatalf("CompareCaptures: %d %+v", status, e)
	}
	r := decodeResult(t, v)
	fd := r.FirstDivergence
	if r.Status != "changed" || r.Terminal != "changed" || fd.Status != "found" || fd.Dimension != "terminal" || fd.Index != 2 ||
		fd.LeftAtMS == nil || *fd.LeftAtMS != 0 || fd.LeftLocation != "$.normalized_result.frames[2]" {
		t.Fatalf("result %+v", r)
	}
	if r.Trace == nil || r.Trace.Verdict != "different" || r.Trace.Diagnostic.Side != "right" ||
		strings.Join(r.Trace.Diagnostic.Locations, ",") != "$.normalized_result.frames[2]" {
		t.Fatalf("trace %+v", r.Trace)
	}
	if len(v.Dimensions) != 7 || v.Dimensions[0].Name != "terminal" || v.Dimensions[0].Status != "changed" || v.Dimensions[0].Total == 0 ||
		v.Dimensions[0].Items[0].Index != 2 || v.Dimensions[1].Name != "interaction" || v.Dimensions[1].Total != 0 {
		t.Fatalf("dimensions %+v", v.Dimensions)
	}
	if !v.Saved || v.EvidenceID == "" || v.PredicateType != "gatehouse.process-comparison/v4" || !v.Left.Available ||
		v.Left.EvidenceID != alpha || !strings.Contains(v.Right.Command, "bravo") || len(v.Left.Record) < 100 {
		t.Fatalf("view %+v", v)
	}

	// The saved comparison opens again, and comparing again agrees.
	o, status, e := apiCall[ComparisonView](t, ts, "OpenComparison", map[string]any{"id": v.EvidenceID})
	if status != 200 || o.Recomputed != "match" || o.EvidenceID != v.EvidenceID || len(o.Dimensions[0].Items) == 0 || string(o.TraceSpec) == "null" {
		t.Fatalf("OpenComparison: %d %+v %+v", status, e, o)
	}
	got, _, _ := apiCall[GetEvidenceResult](t, ts, "GetEvidence", map[string]any{"id": v.EvidenceID})
	tampered := strings.Replace(string(got.Evidence), `"verdict":"different"`, `"verdict":"equivalent"`, 1)
	if tampered == string(got.Evidence) {
		t.Fatal("tampering changed nothing")
	}
	_, status, e = apiCall[ComparisonView](t, ts, "OpenComparison", map[string]any{"text": tampered})
	if status != 400 || e.Code != "evidence_integrity_mismatch" || !strings.Contains(detailPaths(t, e), "$.evidence_id") {
		t.Fatalf("tampered: %d %+v", status, e)
	}
	_, status, e = apiCall[ComparisonView](t, ts, "OpenComparison", map[string]any{"id": alpha})
	if status != 400 || e.Code != "not_a_comparison" || detailPaths(t, e) != "$.predicate_type" {
		t.Fatalf("capture opened as comparison: %d %+v", status, e)
	}

	// A comparison whose captures left the library still opens: verdicts
	// only, and it says it could not re-check them.
	if _, status, e := apiCall[DeleteEvidenceResult](t, ts, "DeleteEvidence", map[string]any{"id": bravo}); status != 200 {
		t.Fatalf("DeleteEvidence: %d %+v", status, e)
	}
	o, status, e = apiCall[ComparisonView](t, ts, "OpenComparison", map[string]any{"text": string(got.Evidence)})
	if status != 200 || o.Recomputed != "unavailable" || o.Saved || !o.Left.Available || o.Right.Available || string(o.Right.Record) != "null" ||
		len(o.Dimensions) != 7 || o.Dimensions[0].Status != "changed" || len(o.Dimensions[0].Items) != 0 || o.Right.Problem == "" {
		t.Fatalf("OpenComparison without the right capture: %d %+v %+v", status, e, o)
	}
	bravo = cmpCapture(t, ts, work, "bravo")

	// Structured errors with paths, and nothing saved.
	before, _, _ := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{})
	_, status, e = apiCall[ComparisonView](t, ts, "CompareCaptures", map[string]any{"left": "ev_nope", "right": bravo})
	if status != 400 || detailPaths(t, e) != "$.left" {
		t.Fatalf("bad id: %d %+v", status, e)
	}
	badSpec := strings.Replace(stepTrace, `"after": "done"`, `"after": "nowhere"`, 1)
	_, status, e = apiCall[ComparisonView](t, ts, "CompareCaptures", map[string]any{"left": alpha, "right": bravo, "traceSpec": badSpec, "save": true})
	if status != 400 || e.Code != "invalid_trace_spec" || !strings.Contains(string(e.Details), "$.language.happens_before[2].after") {
		t.Fatalf("bad trace spec: %d %+v %s", status, e, e.Details)
	}
	after, _, _ := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{})
	if len(after.Evidence) != len(before.Evidence) {
		t.Fatalf("a failed comparison changed the library: %d → %d", len(before.Evidence), len(after.Evidence))
	}
}

func TestAsciicastExportImportOverTheBridge(t *testing.T) {
	ts := startServer(t)
	alpha := cmpCapture(t, ts, t.TempDir(), "alpha")
	ex, status, e := apiCall[ExportAsciicastResult](t, ts, "ExportAsciicast", map[string]any{"id": alpha})
	if status != 200 || !strings.HasPrefix(ex.Text, `{"version":2,"width":40,"height":6,`) || !strings.Contains(ex.Text, `[0.000, "o", "step 3 alpha\r\n"]`) ||
		!strings.HasSuffix(ex.Name, ".cast") || ex.Events < 4 {
		t.Fatalf("export: %d %+v\n%s", status, e, ex.Text)
	}
	im, status, e := apiCall[ImportAsciicastResult](t, ts, "ImportAsciicast", map[string]any{"name": "alpha.cast", "text": ex.Text})
	if status != 200 || im.PredicateType != "gatehouse.terminal-recording/v1" || im.Origin != "imported" || im.Frames != 4 || im.DurationMS < 1000 {
		t.Fatalf("import: %d %+v %+v", status, e, im)
	}
	var rec struct {
		Frames []capture.Frame `json:"frames"`
	}
	json.Unmarshal(im.Record, &rec)
	cap, _, _ := apiCall[GetEvidenceResult](t, ts, "GetEvidence", map[string]any{"id": alpha})
	var orig struct {
		NormalizedResult struct {
			Frames []capture.Frame `json:"frames"`
		} `json:"normalized_result"`
	}
	json.Unmarshal(cap.Evidence, &orig)
	if len(rec.Frames) != len(orig.NormalizedResult.Frames) {
		t.Fatalf("frames %d, want %d", len(rec.Frames), len(orig.NormalizedResult.Frames))
	}
	for i := range rec.Frames {
		if rec.Frames[i] != orig.NormalizedResult.Frames[i] {
			t.Errorf("frame %d: %+v, want %+v", i, rec.Frames[i], orig.NormalizedResult.Frames[i])
		}
	}
	list, _, _ := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{})
	found := false
	for _, it := range list.Evidence {
		if it.EvidenceID == im.EvidenceID {
			found = it.Origin == "imported" && strings.Contains(string(it.Summary), "terminal only")
		}
	}
	if !found {
		t.Fatalf("the import is not in the library as imported: %+v", list.Evidence)
	}
	// An imported recording exports again, and cannot be compared as a capture.
	if _, status, e := apiCall[ExportAsciicastResult](t, ts, "ExportAsciicast", map[string]any{"id": im.EvidenceID}); status != 200 {
		t.Fatalf("re-export: %d %+v", status, e)
	}
	_, status, e = apiCall[ComparisonView](t, ts, "CompareCaptures", map[string]any{"left": alpha, "right": im.EvidenceID})
	if status != 400 || e.Code != "not_a_capture" || detailPaths(t, e) != "$.right" {
		t.Fatalf("recording compared as capture: %d %+v", status, e)
	}
	// A malformed file is refused with its line and path; nothing is saved.
	_, status, e = apiCall[ImportAsciicastResult](t, ts, "ImportAsciicast", map[string]any{"name": "bad.cast",
		"text": "{\"version\": 2, \"width\": 10, \"height\": 2}\n[0.5, \"o\", \"a\"]\n[0.25, \"o\", \"b\"]\n"})
	var issues []struct {
		Line int    `json:"line"`
		Path string `json:"path"`
		Code string `json:"code"`
	}
	json.Unmarshal(e.Details, &issues)
	if status != 400 || e.Code != "invalid_asciicast" || len(issues) != 1 || issues[0].Line != 3 || issues[0].Path != "$[0]" || issues[0].Code != "time_order" {
		t.Fatalf("bad cast: %d %+v", status, e)
	}
	again, _, _ := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{})
	if len(again.Evidence) != len(list.Evidence) {
		t.Fatalf("a rejected import changed the library")
	}
	if _, status, e := apiCall[ExportAsciicastResult](t, ts, "ExportAsciicast", map[string]any{"id": "ev_" + strings.Repeat("0", 64)}); status != 404 {
		t.Fatalf("missing id: %d %+v", status, e)
	}
}

// The behavior mode is the default, the exact mode is asked for by name,
// both are recorded; CompareDiffPage pages a dimension and refuses bad
// arguments with their path.
func TestCompareModesAndDiffPages(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	alpha, bravo := cmpCapture(t, ts, work, "alpha"), cmpCapture(t, ts, work, "bravo")
	for _, mode := range []string{"", "behavior", "exact"} {
		v, status, e := apiCall[ComparisonView](t, ts, "CompareCaptures", map[string]any{"left": alpha, "right": bravo, "mode": mode})
		if status != 200 {
			t.Fatalf("mode %q: %d %+v", mode, status, e)
		}
		var r struct {
			Mode            string `json:"mode"`
			FirstDivergence struct {
				Dimension string          `json:"dimension"`
				Left      json.RawMessage `json:"left"`
			} `json:"first_divergence"`
		}
		json.Unmarshal(v.Result, &r)
		want := mode
		if want == "" {
			want = "behavior"
		}
		if r.Mode != want {
			t.Errorf("mode %q: result mode %q", mode, r.Mode)
		}
		// The argument that differs is part of the command line, so both
		// modes see the terminal first: behavior names the row.
		if want == "behavior" && (r.FirstDivergence.Dimension != "terminal" || !strings.Contains(string(r.FirstDivergence.Left), `"text":"step 3 alpha"`)) {
			t.Errorf("behavior divergence %s %s", r.FirstDivergence.Dimension, r.FirstDivergence.Left)
		}
	}
	_, status, e := apiCall[ComparisonView](t, ts, "CompareCaptures", map[string]any{"left": alpha, "right": bravo, "mode": "fuzzy"})
	if status == 200 || e.Code != "invalid_arguments" || detailPaths(t, e) != "$.mode" {
		t.Errorf("bad mode: %d %+v", status, e)
	}

	// A comparison recorded before modes existed (no mode in its result or
	// parameters) still re-checks as a match: it used the exact rules.
	le, _, err := ts.facade.cmpLoadCapture(alpha, "left")
	if err != nil {
		t.Fatal(err)
	}
	re, _, _ := ts.facade.cmpLoadCapture(bravo, "right")
	res, err := compare.Compare(le, re, compare.Options{Mode: compare.ModeExact})
	if err != nil {
		t.Fatal(err)
	}
	old, _ := compare.Envelope(res, le, re)
	strip := func(raw json.RawMessage) json.RawMessage {
		var m map[string]json.RawMessage
		json.Unmarshal(raw, &m)
		delete(m, "mode")
		b, _ := json.Marshal(m)
		return b
	}
	old.NormalizedResult, old.Parameters, old.EvidenceID = strip(old.NormalizedResult), strip(old.Parameters), ""
	if err := evidence.Seal(old); err != nil {
		t.Fatal(err)
	}
	oldText, _ := json.Marshal(old)
	o, status, e := apiCall[ComparisonView](t, ts, "OpenComparison", map[string]any{"text": string(oldText)})
	if status != 200 || o.Recomputed != "match" || strings.Contains(string(o.Result), `"mode"`) {
		t.Errorf("pre-mode comparison: %d %+v recomputed %q", status, e, o.Recomputed)
	}

	page, status, e := apiCall[DimensionRow](t, ts, "CompareDiffPage", map[string]any{"left": alpha, "right": bravo, "mode": "exact", "dimension": "terminal", "offset": 1, "limit": 1})
	if status != 200 || page.Name != "terminal" || page.Offset != 1 || page.Total < 2 || len(page.Items) != 1 {
		t.Fatalf("page: %d %+v %+v", status, e, page)
	}
	all, _, _ := apiCall[DimensionRow](t, ts, "CompareDiffPage", map[string]any{"left": alpha, "right": bravo, "mode": "exact", "dimension": "terminal", "offset": 0, "limit": 1000})
	if len(all.Items) != all.Total || all.Items[1].Index != page.Items[0].Index {
		t.Errorf("pages disagree: %+v vs %+v", all.Items, page.Items)
	}
	for _, bad := range []struct {
		args map[string]any
		path string
	}{
		{map[string]any{"left": alpha, "right": bravo, "dimension": "colour", "offset": 0}, "$.dimension"},
		{map[string]any{"left": alpha, "right": bravo, "dimension": "terminal", "offset": -1}, "$.offset"},
		{map[string]any{"left": alpha, "right": bravo, "dimension": "terminal", "offset": 0, "limit": 1001}, "$.limit"},
		{map[string]any{"left": alpha, "right": "ev_x", "dimension": "terminal", "offset": 0}, "$.right"},
	} {
		_, status, e := apiCall[DimensionRow](t, ts, "CompareDiffPage", bad.args)
		if status == 200 || e.Code != "invalid_arguments" || detailPaths(t, e) != bad.path {
			t.Errorf("%v: %d %+v", bad.args, status, e)
		}
	}
}

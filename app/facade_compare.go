package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gatehouse/gatehouse/backend/asciicast"
	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/compare"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
	"github.com/gatehouse/gatehouse/backend/store"
)

// maxDiffItems is the page size of differing items per dimension in a
// comparison view (DimensionDiff.Total still counts them all; later
// pages come from CompareDiffPage).
const maxDiffItems = 200

// maxDiffPage is the largest page CompareDiffPage returns.
const maxDiffPage = 1000

// CompareCapturesArgs names two saved captures and an optional trace spec.
type CompareCapturesArgs struct {
	// Left and Right are evidence ids of saved Process Capture Evidence
	// (left is the authority, right the reconstruction).
	Left  string `json:"left"`
	Right string `json:"right"`
	// TraceSpec is the exact JSON text of a trace spec (version 1), or "".
	TraceSpec string `json:"traceSpec,omitempty"`
	// Mode is "behavior" (the default, also for "") or "exact".
	Mode string `json:"mode,omitempty"`
	// Save seals the comparison as Evidence and saves it in the library.
	Save bool `json:"save,omitempty"`
}

// ComparisonSide is one capture of a comparison as the compare view needs
// it: its id, whether it is in the library, a label and its record.
type ComparisonSide struct {
	EvidenceID string `json:"evidence_id"`
	// Available is false when the capture is not in the library (a
	// comparison Evidence opened from a file may link to captures made
	// elsewhere); Record is then null.
	Available   bool            `json:"available"`
	Command     string          `json:"command"`
	StartedAt   string          `json:"started_at"`
	CompletedAt string          `json:"completed_at"`
	Record      json.RawMessage `json:"record"`
	Problem     string          `json:"problem,omitempty"`
}

// DimensionRow is one dimension of a comparison: its verdict and the
// items that differ (compare.DimensionDiff).
type DimensionRow struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	compare.DimensionDiff
}

// ComparisonView is a comparison shown in the compare view.
type ComparisonView struct {
	// EvidenceID is the comparison Evidence's id: set when it was saved
	// (CompareCaptures with save) or opened (OpenComparison).
	EvidenceID    string `json:"evidence_id,omitempty"`
	Saved         bool   `json:"saved"`
	PredicateType string `json:"predicate_type"`
	// Result is the comparison result (docs/formats/comparison.md): status, the
	// seven dimension verdicts, first_divergence, trace?, limitations.
	Result json.RawMessage `json:"result"`
	// Dimensions are the seven dimensions in tie-break order with their
	// differing items; empty when a side's record is unavailable.
	Dimensions []DimensionRow  `json:"dimensions"`
	Left       ComparisonSide  `json:"left"`
	Right      ComparisonSide  `json:"right"`
	TraceSpec  json.RawMessage `json:"trace_spec"`
	// DivergenceFields names the members in which the first divergence's
	// two items differ under the mode (null when they are not objects or
	// the comparison was not recomputed).
	DivergenceFields []string `json:"divergence_fields"`
	// Recomputed, for an opened comparison, says whether comparing the two
	// captures again gave the same result: "match", "mismatch" or
	// "unavailable" (a capture is not in the library). "" for a fresh one.
	Recomputed string `json:"recomputed,omitempty"`
}

// CompareCaptures compares two saved captures (both re-verified on read)
// with the rules of docs/formats/comparison.md and, with a trace spec, checks
// both against it. Errors are structured with paths: invalid ids
// ($.left/$.right), a rejected trace spec (code invalid_trace_spec, every
// issue with its path in the spec), refused comparisons (incompatible
// contracts, invalid captures) with the failing paths of each side. With
// save, the comparison Evidence is sealed, saved and indexed; nothing is
// saved when anything fails.
func (f *Facade) CompareCaptures(a CompareCapturesArgs) (ComparisonView, error) {
	left, lc, err := f.cmpLoadCapture(a.Left, "left")
	if err != nil {
		return ComparisonView{}, err
	}
	right, rc, err := f.cmpLoadCapture(a.Right, "right")
	if err != nil {
		return ComparisonView{}, err
	}
	mode, err := cmpMode(a.Mode)
	if err != nil {
		return ComparisonView{}, err
	}
	opts := compare.Options{DiffLimit: maxDiffItems, Mode: mode}
	trace := json.RawMessage("null")
	if strings.TrimSpace(a.TraceSpec) != "" {
		spec, err := compare.ParseTraceSpec([]byte(a.TraceSpec))
		if err != nil {
			return ComparisonView{}, compareError(err)
		}
		opts.Trace = spec
		trace = compactJSON([]byte(a.TraceSpec))
	}
	res, err := compare.CompareCaptures(lc, rc, opts)
	if err != nil {
		return ComparisonView{}, compareError(err)
	}
	env, err := compare.Envelope(res, left, right)
	if err != nil {
		return ComparisonView{}, errorf("internal", CategoryInternal, "could not seal the comparison Evidence: %v", err)
	}
	view := ComparisonView{PredicateType: env.PredicateType, Result: env.NormalizedResult, TraceSpec: trace,
		Left: cmpSide(left, left.NormalizedResult), Right: cmpSide(right, right.NormalizedResult)}
	view.Dimensions = cmpRows(env.NormalizedResult, res.Diffs)
	view.DivergenceFields = res.DivergenceFields
	if a.Save {
		if err := f.cmpSave(env, res); err != nil {
			return ComparisonView{}, err
		}
		view.EvidenceID, view.Saved = env.EvidenceID, true
	}
	return view, nil
}

// OpenComparisonArgs names a comparison Evidence: a saved one by ID, or
// the exact JSON Text of a file (exactly one of the two).
type OpenComparisonArgs struct {
	ID   string `json:"id,omitempty"`
	Text string `json:"text,omitempty"`
}

// OpenComparison reads comparison Evidence (gatehouse.process-comparison
// v3 or v4), re-verifies the envelope and its evidence_id (a file that
// fails is refused with every failing path), loads the two linked
// captures from the library when they are there, and compares them again
// to say whether the recorded result still holds (Recomputed). Opening a
// file saves nothing.
func (f *Facade) OpenComparison(a OpenComparisonArgs) (ComparisonView, error) {
	var data []byte
	switch {
	case (a.ID == "") == (a.Text == ""):
		return ComparisonView{}, &CLIError{Code: "invalid_arguments", Category: CategoryInvalid,
			Details: []evidenceIssue{{Code: "invalid_value", Path: "$", Message: "give exactly one of id and text"}},
			Message: "OpenComparison needs either the id of a saved comparison or the text of a comparison Evidence file"}
	case a.ID != "":
		got, err := f.GetEvidence(GetEvidenceArgs{ID: a.ID})
		if err != nil {
			return ComparisonView{}, err
		}
		data = got.Evidence
	default:
		data = []byte(a.Text)
	}
	env, issues := evidence.Parse(data)
	if len(issues) > 0 {
		code := "invalid_evidence"
		for _, is := range issues {
			if is.Code == evidence.CodeIDMismatch {
				code = "evidence_integrity_mismatch"
			}
		}
		return ComparisonView{}, &CLIError{Code: code, Category: CategoryInvalid, Details: issues,
			Message: fmt.Sprintf("the comparison Evidence was rejected: %d failing path(s)", len(issues))}
	}
	if env.PredicateType != evidence.PredicateProcessComparison && env.PredicateType != evidence.PredicateProcessComparisonTrace {
		return ComparisonView{}, &CLIError{Code: "not_a_comparison", Category: CategoryInvalid,
			Details: []evidenceIssue{{Code: "invalid_value", Path: "$.predicate_type", Message: "expected " + evidence.PredicateProcessComparison + " or " + evidence.PredicateProcessComparisonTrace}},
			Message: fmt.Sprintf("%s is %s Evidence, not a comparison", env.EvidenceID, env.PredicateType)}
	}
	var params struct {
		TraceSpec json.RawMessage `json:"trace_spec"`
		Mode      string          `json:"mode"`
	}
	_ = json.Unmarshal(env.Parameters, &params)
	view := ComparisonView{EvidenceID: env.EvidenceID, Saved: a.ID != "", PredicateType: env.PredicateType,
		Result: env.NormalizedResult, TraceSpec: params.TraceSpec, Dimensions: []DimensionRow{}, Recomputed: "unavailable"}
	if len(view.TraceSpec) == 0 {
		view.TraceSpec = json.RawMessage("null")
	}
	sides := [2]*ComparisonSide{&view.Left, &view.Right}
	var envs [2]*evidence.Envelope
	var caps [2]compare.Capture
	for i, id := range env.EvidenceLinks {
		*sides[i] = ComparisonSide{EvidenceID: id, Record: json.RawMessage("null")}
		e, c, err := f.cmpLoadCapture(id, cmpSideName(i))
		if err != nil {
			var ce *CLIError
			if errors.As(err, &ce) {
				sides[i].Problem = ce.Message
			}
			continue
		}
		envs[i], caps[i] = e, c
		*sides[i] = cmpSide(e, e.NormalizedResult)
	}
	if envs[0] == nil || envs[1] == nil {
		view.Dimensions = cmpRows(env.NormalizedResult, nil)
		return view, nil
	}
	// A comparison recorded before modes existed used the exact rules.
	mode := compare.ModeExact
	if m, ok := compare.ParseMode(params.Mode); ok && params.Mode != "" {
		mode = m
	}
	opts := compare.Options{DiffLimit: maxDiffItems, Mode: mode}
	if len(params.TraceSpec) > 0 && string(params.TraceSpec) != "null" {
		spec, err := compare.ParseTraceSpec(params.TraceSpec)
		if err != nil {
			return ComparisonView{}, compareError(err)
		}
		opts.Trace = spec
	}
	view.Recomputed = "mismatch"
	var diffs []compare.DimensionDiff
	if res, err := compare.CompareCaptures(caps[0], caps[1], opts); err == nil {
		diffs = res.Diffs
		view.DivergenceFields = res.DivergenceFields
		if again, err := compare.Envelope(res, envs[0], envs[1]); err == nil && cmpCanonicalEqual(cmpWithoutMode(again.NormalizedResult, params.Mode == ""), env.NormalizedResult) {
			view.Recomputed = "match"
		}
	}
	view.Dimensions = cmpRows(env.NormalizedResult, diffs)
	return view, nil
}

// CompareDiffPageArgs names one page of one dimension's differing items
// of a comparison of two saved captures.
type CompareDiffPageArgs struct {
	Left  string `json:"left"`
	Right string `json:"right"`
	// Mode is "behavior" (the default, also for "") or "exact".
	Mode      string `json:"mode,omitempty"`
	Dimension string `json:"dimension"`
	// Offset is the first differing item returned; Limit how many (1 to
	// 1000; 0 means 200).
	Offset int `json:"offset"`
	Limit  int `json:"limit,omitempty"`
}

// CompareDiffPage compares the two saved captures again (both re-verified
// on read) and returns one page of one dimension's differing items:
// Total counts them all, Offset says where the page starts. Bad
// arguments are refused with their path ($.dimension, $.offset, $.limit,
// $.mode).
func (f *Facade) CompareDiffPage(a CompareDiffPageArgs) (DimensionRow, error) {
	bad := func(path, msg string) error {
		return &CLIError{Code: "invalid_arguments", Category: CategoryInvalid,
			Details: []evidenceIssue{{Code: "invalid_value", Path: path, Message: msg}}, Message: msg}
	}
	di := slices.Index(compare.Dimensions(), a.Dimension)
	switch {
	case di < 0:
		return DimensionRow{}, bad("$.dimension", fmt.Sprintf("%q is not a comparison dimension", strictTruncate(a.Dimension, 40)))
	case a.Offset < 0:
		return DimensionRow{}, bad("$.offset", "offset must not be negative")
	case a.Limit < 0 || a.Limit > maxDiffPage:
		return DimensionRow{}, bad("$.limit", fmt.Sprintf("limit must be between 1 and %d", maxDiffPage))
	}
	if a.Limit == 0 {
		a.Limit = maxDiffItems
	}
	mode, err := cmpMode(a.Mode)
	if err != nil {
		return DimensionRow{}, err
	}
	_, left, err := f.cmpLoadCapture(a.Left, "left")
	if err != nil {
		return DimensionRow{}, err
	}
	_, right, err := f.cmpLoadCapture(a.Right, "right")
	if err != nil {
		return DimensionRow{}, err
	}
	res, err := compare.CompareCaptures(left, right, compare.Options{Mode: mode, DiffLimit: a.Limit, DiffOffset: a.Offset})
	if err != nil {
		return DimensionRow{}, compareError(err)
	}
	return DimensionRow{Name: a.Dimension, Status: string(res.DimensionViews()[di].Status), DimensionDiff: res.Diffs[di]}, nil
}

// cmpMode reads a comparison mode argument.
func cmpMode(name string) (compare.Mode, error) {
	mode, ok := compare.ParseMode(name)
	if !ok {
		return "", &CLIError{Code: "invalid_arguments", Category: CategoryInvalid,
			Details: []evidenceIssue{{Code: "invalid_value", Path: "$.mode", Message: "mode is behavior or exact"}},
			Message: fmt.Sprintf("%q is not a comparison mode; use behavior (the default) or exact", strictTruncate(name, 40))}
	}
	return mode, nil
}

func cmpSideName(i int) string {
	if i == 0 {
		return "left"
	}
	return "right"
}

// ExportAsciicastArgs names a saved capture or imported recording.
type ExportAsciicastArgs struct {
	ID string `json:"id"`
}

// ExportAsciicastResult is an asciicast v2 file.
type ExportAsciicastResult struct {
	// Name is a suggested file name (<short id>.cast).
	Name string `json:"name"`
	// Text is the file: a header line and one event per line.
	Text string `json:"text"`
	// Events counts the event lines.
	Events int `json:"events"`
}

// ExportAsciicast writes a saved Process Capture (re-verified on read) or
// an imported terminal recording as asciicast v2 (see asciicast.
// ExportCapture: sensitive input only as its redaction placeholder).
// Other Evidence is refused (code not_exportable).
func (f *Facade) ExportAsciicast(a ExportAsciicastArgs) (ExportAsciicastResult, error) {
	got, err := f.GetEvidence(GetEvidenceArgs{ID: a.ID})
	if err != nil {
		return ExportAsciicastResult{}, err
	}
	var env struct {
		PredicateType    string          `json:"predicate_type"`
		NormalizedResult json.RawMessage `json:"normalized_result"`
	}
	if err := json.Unmarshal(got.Evidence, &env); err != nil {
		return ExportAsciicastResult{}, errorf("internal", CategoryInternal, "read verified Evidence: %v", err)
	}
	var text []byte
	switch env.PredicateType {
	case evidence.PredicateProcessCapture:
		var rec capture.Record
		if err := json.Unmarshal(env.NormalizedResult, &rec); err != nil {
			return ExportAsciicastResult{}, errorf("internal", CategoryInternal, "read verified capture: %v", err)
		}
		text, err = asciicast.ExportCapture(&rec)
	case asciicast.PredicateTerminalRecording:
		var rec *asciicast.Recording
		rec, err = asciicast.ParseRecording(env.NormalizedResult)
		if err == nil {
			text, err = asciicast.ExportRecording(rec)
		}
	default:
		return ExportAsciicastResult{}, &CLIError{Code: "not_exportable", Category: CategoryInvalid,
			Details: []evidenceIssue{{Code: "invalid_value", Path: "$.predicate_type", Message: "only process captures and imported terminal recordings have a terminal to export"}},
			Message: fmt.Sprintf("%s is %s Evidence, which has no terminal recording", a.ID, env.PredicateType)}
	}
	if err != nil {
		return ExportAsciicastResult{}, asciicastError(err)
	}
	return ExportAsciicastResult{Name: a.ID[:len("ev_")+12] + ".cast", Text: string(text), Events: bytes.Count(text, []byte{'\n'}) - 1}, nil
}

// ImportAsciicastArgs is an asciicast file picked or dropped in the UI.
type ImportAsciicastArgs struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// ImportAsciicastResult is the saved terminal-only recording.
type ImportAsciicastResult struct {
	EvidenceID    string `json:"evidence_id"`
	PredicateType string `json:"predicate_type"`
	Origin        string `json:"origin"`
	Label         string `json:"label"`
	Version       int    `json:"version"`
	Frames        int    `json:"frames"`
	DurationMS    int    `json:"duration_ms"`
	// Record is the Recording (asciicast.Recording): frames, rendered
	// frames, interaction events, markers, dimensions (terminal observed,
	// the rest unknown), residual unknowns and limitations.
	Record json.RawMessage `json:"record"`
}

// ImportAsciicast reads an asciicast v1, v2 or v3 file as a terminal-only
// recording (predicate gatehouse.terminal-recording/v1, never Process
// Capture Evidence), seals it, saves it in the library and indexes it with
// origin "imported". A rejected file (code invalid_asciicast) lists every
// problem with its line and path; nothing is saved then.
func (f *Facade) ImportAsciicast(a ImportAsciicastArgs) (ImportAsciicastResult, error) {
	rh, err := rendererHelper(f.env, f.sup)
	if err != nil {
		return ImportAsciicastResult{}, err
	}
	rec, err := asciicast.Import(rh, []byte(a.Text), a.Name)
	if err != nil {
		return ImportAsciicastResult{}, asciicastError(err)
	}
	env, out, err := asciicast.Evidence(rec)
	if err != nil {
		return ImportAsciicastResult{}, asciicastError(err)
	}
	duration := 0
	for _, fr := range rec.RenderedFrames {
		duration = max(duration, fr.AtMS)
	}
	for _, m := range rec.Markers {
		duration = max(duration, m.AtMS)
	}
	res := ImportAsciicastResult{EvidenceID: env.EvidenceID, PredicateType: env.PredicateType, Origin: OriginImported,
		Label: asciicast.OriginLabel, Version: rec.Origin.Version, Frames: len(rec.Frames), DurationMS: duration, Record: env.NormalizedResult}
	summary, _ := json.Marshal(map[string]any{"origin": OriginImported, "file_name": a.Name, "label": asciicast.OriginLabel,
		"format": fmt.Sprintf("asciicast v%d", rec.Origin.Version), "frames": len(rec.Frames), "duration_ms": duration,
		"terminal_only": true, "title": rec.Origin.Title})
	checked, err := library.CheckForSave(out, env.EvidenceID)
	if err != nil {
		return ImportAsciicastResult{}, libError(err)
	}
	if _, err := f.env.lib().Save(f.ctx, store.EvidenceEntry{PredicateType: env.PredicateType,
		Operation: env.Operation, Summary: summary}, checked); err != nil {
		return ImportAsciicastResult{}, libError(err)
	}
	return res, nil
}

// asciicastError turns an import or export failure into a structured
// error; an *asciicast.Error's issues (line, path, code, message) become
// its details.
func asciicastError(err error) error {
	var ae *asciicast.Error
	if errors.As(err, &ae) {
		first := ae.Issues[0]
		return &CLIError{Code: "invalid_asciicast", Category: CategoryInvalid, Details: ae.Issues,
			Message: fmt.Sprintf("the asciicast file was rejected: %d issue(s), the first on line %d at %s: %s; nothing was imported",
				len(ae.Issues), first.Line, first.Path, first.Message)}
	}
	return errorf("asciicast_failed", CategoryInternal, "%v", err)
}

// cmpLoadCapture reads a saved capture by id for a comparison: the
// library verifies the file as every read does (or accepts its
// verification mark) and hands out the proof that its record passed
// record.Verify (library.OpenCapture: the proof its save or an earlier
// read made, or one made now, once, for a file accepted by its mark),
// which compare.NewCapture pairs with the envelope. The comparison then
// reads exactly the verified record and verifies nothing again. Errors
// say which side they are about.
func (f *Facade) cmpLoadCapture(id, side string) (*evidence.Envelope, compare.Capture, error) {
	if !evidence.ValidID(id) {
		return nil, compare.Capture{}, &CLIError{Code: "invalid_arguments", Category: CategoryInvalid,
			Details: []evidenceIssue{{Code: "invalid_value", Path: "$." + side, Message: "an evidence id is ev_ followed by 64 lowercase hex digits"}},
			Message: fmt.Sprintf("the %s capture %q is not an evidence id", side, strictTruncate(id, 80))}
	}
	lib := f.env.lib()
	o, err := lib.OpenCapture(f.ctx, id)
	if le, ok := library.AsError(err); ok && le.Code == "not_a_capture" {
		predicate := "another predicate's"
		if e, err := lib.Find(f.ctx, id); err == nil {
			predicate = e.PredicateType
		}
		return nil, compare.Capture{}, &CLIError{Code: "not_a_capture", Category: CategoryInvalid,
			Details: []evidenceIssue{{Code: "invalid_value", Path: "$." + side, Message: "expected " + evidence.PredicateProcessCapture + " Evidence, not " + predicate}},
			Message: fmt.Sprintf("the %s side %s is %s Evidence; only process captures are compared (an imported asciicast is terminal-only)", side, id, predicate)}
	}
	if err != nil {
		var ce *CLIError
		if errors.As(libError(err), &ce) {
			c := *ce
			c.Message = fmt.Sprintf("%s capture: %s", side, ce.Message)
			return nil, compare.Capture{}, &c
		}
		return nil, compare.Capture{}, err
	}
	c, err := compare.NewCapture(o.Envelope, o.Record)
	if err != nil {
		return nil, compare.Capture{}, compareError(err)
	}
	return o.Envelope, c, nil
}

// cmpSide describes a loaded capture.
func cmpSide(env *evidence.Envelope, raw json.RawMessage) ComparisonSide {
	var rec struct {
		Manifest struct {
			StartedAt   string `json:"started_at"`
			CompletedAt string `json:"completed_at"`
			Scenario    struct {
				Executable string   `json:"executable"`
				Arguments  []string `json:"arguments"`
			} `json:"scenario"`
		} `json:"manifest"`
	}
	_ = json.Unmarshal(raw, &rec)
	m := rec.Manifest
	command := strings.Join(append([]string{path.Base(m.Scenario.Executable)}, m.Scenario.Arguments...), " ")
	return ComparisonSide{EvidenceID: env.EvidenceID, Available: true, Command: strictTruncate(command, 300),
		StartedAt: m.StartedAt, CompletedAt: m.CompletedAt, Record: raw}
}

// cmpRows pairs the result's dimension verdicts with the diffs (nil:
// verdicts only).
func cmpRows(result json.RawMessage, diffs []compare.DimensionDiff) []DimensionRow {
	var statuses map[string]json.RawMessage
	_ = json.Unmarshal(result, &statuses)
	rows := make([]DimensionRow, 0, len(compare.Dimensions()))
	for i, name := range compare.Dimensions() {
		var st string
		_ = json.Unmarshal(statuses[name], &st)
		row := DimensionRow{Name: name, Status: st, DimensionDiff: compare.DimensionDiff{Dimension: name, Items: []compare.DiffItem{}}}
		if i < len(diffs) {
			row.DimensionDiff = diffs[i]
		}
		rows = append(rows, row)
	}
	return rows
}

// cmpSave seals, saves and indexes comparison Evidence.
func (f *Facade) cmpSave(env *evidence.Envelope, res compare.Result) error {
	out, err := marshalPlain(env, "  ")
	if err != nil {
		return errorf("internal", CategoryInternal, "encode the comparison Evidence: %v", err)
	}
	summary, _ := json.Marshal(map[string]any{"origin": OriginCaptured, "status": res.Status, "left": env.EvidenceLinks[0],
		"right": env.EvidenceLinks[1], "first_divergence": res.FirstDivergence.Dimension, "trace": res.Trace != nil})
	checked, err := library.CheckForSave(out, env.EvidenceID)
	if err != nil {
		return libError(err)
	}
	_, err = f.env.lib().Save(f.ctx, store.EvidenceEntry{PredicateType: env.PredicateType,
		Operation: env.Operation, Summary: summary}, checked)
	return libError(err)
}

// cmpWithoutMode is result without its "mode" member when drop is set: a
// comparison recorded before modes existed has none, and its recomputed
// (exact) result must match it otherwise.
func cmpWithoutMode(result json.RawMessage, drop bool) json.RawMessage {
	if !drop {
		return result
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return result
	}
	delete(m, "mode")
	out, err := json.Marshal(m)
	if err != nil {
		return result
	}
	return out
}

// cmpCanonicalEqual compares two JSON values by their RFC 8785 forms.
func cmpCanonicalEqual(a, b json.RawMessage) bool {
	ca, err1 := evidence.Canonicalize(a)
	cb, err2 := evidence.Canonicalize(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// compactJSON is raw without insignificant whitespace (raw was accepted
// by a strict parser).
func compactJSON(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return json.RawMessage("null")
	}
	return b.Bytes()
}

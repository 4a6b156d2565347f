// Package compare compares two Process Capture v4 Evidence records
// (docs/formats/capture-record.md) dimension by dimension and reports the first divergence,
// as docs/formats/comparison.md specifies, and optionally checks
// both captures against a trace spec (see ParseTraceSpec).
//
// Every record is verified once, where its bytes enter: a Capture pairs
// an envelope with record.Verified, the proof that record.Verify (the one
// check of every invariant docs/formats/capture-record.md lists; this
// package keeps no checker of its own) accepted exactly those bytes.
// CompareCaptures and DiffsCaptures read each record from its proof and
// verify nothing; NewCapture takes a proof the caller has (the evidence
// library keeps one for what it verified), CheckCaptures verifies two
// envelopes, and Compare and Diffs are CheckCaptures followed by
// CompareCaptures or DiffsCaptures. Envelope turns a Result into sealed
// comparison Evidence. Nothing here keeps package-level mutable state; all
// functions are safe for concurrent use.
package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Status classifies one dimension, or the comparison as a whole.
type Status string

// The statuses of docs/formats/comparison.md.
const (
	// Unchanged: both sides observed canonically equal items.
	Unchanged Status = "unchanged"
	// Added: the left side observed nothing, the right side something.
	Added Status = "added"
	// Removed: the right side observed nothing, the left side something.
	Removed Status = "removed"
	// Changed: both sides observed something, and it differs.
	Changed Status = "changed"
	// Truncated: at least one capture is truncated.
	Truncated Status = "truncated"
	// Unknown: the captures were normalized differently, or a residual
	// unknown covers the dimension.
	Unknown Status = "unknown"
)

// dimNames are the comparison dimensions in the order used to break
// first-divergence ties.
var dimNames = [...]string{"terminal", "interaction", "exit", "filesystem", "protocol", "process", "shim"}

// Dimensions returns the comparison dimensions in the order used to break
// first-divergence ties: terminal, interaction, exit, filesystem,
// protocol, process, shim.
func Dimensions() []string { return slices.Clone(dimNames[:]) }

type dim int

const (
	dimTerminal dim = iota
	dimInteraction
	dimExit
	dimFilesystem
	dimProtocol
	dimProcess
	dimShim
	numDims
)

// Options configure one comparison.
type Options struct {
	// MaxCaptureAgeMS, when positive, refuses a capture whose
	// manifest.completed_at is more than this many milliseconds before
	// Now(). Zero means no age limit; negative values are invalid.
	MaxCaptureAgeMS int64
	// Now is the clock the age check reads; nil means time.Now.
	Now func() time.Time
	// Trace, when set, is checked against both captures' event journals
	// and the result carries a trace verdict.
	Trace *TraceSpec
	// Mode is ModeBehavior (the default, also for "") or ModeExact; any
	// other value is refused (CodeInvalidRequest).
	Mode Mode
	// DiffLimit, when positive, fills Result.Diffs with at most DiffLimit
	// differing items per dimension, skipping the first DiffOffset ones
	// (a page; DimensionDiff.Total still counts them all), from the
	// records this comparison already read.
	DiffLimit int
	// DiffOffset is the first differing item of each dimension kept in
	// Result.Diffs (0: from the start); negative values are invalid.
	DiffOffset int
}

// Result is the outcome of a comparison: the normalized_result of
// comparison Evidence. Its JSON shape is that of docs/formats/comparison.md.
type Result struct {
	Status          Status       `json:"status"`
	Mode            Mode         `json:"mode"`
	Terminal        Status       `json:"terminal"`
	Interaction     Status       `json:"interaction"`
	Exit            Status       `json:"exit"`
	Filesystem      Status       `json:"filesystem"`
	Protocol        Status       `json:"protocol"`
	Process         Status       `json:"process"`
	Shim            Status       `json:"shim"`
	FirstDivergence Divergence   `json:"first_divergence"`
	Trace           *TraceResult `json:"trace,omitempty"`
	Limitations     []string     `json:"limitations"`
	// Diffs are the differing items per dimension when Options.DiffLimit
	// is positive (see Diffs); they are not part of the Evidence.
	Diffs []DimensionDiff `json:"-"`
	// DivergenceFields names the members in which the first divergence's
	// two objects differ under the mode (see DiffItem.DifferingFields);
	// not part of the Evidence.
	DivergenceFields []string `json:"-"`

	counts [numDims][2]int // observations per dimension, left and right
	params parameters
}

// parameters are what the comparison was asked to do; Envelope records
// them as the Evidence parameters.
type parameters struct {
	Mode            Mode            `json:"mode"`
	MaxCaptureAgeMS *int64          `json:"max_capture_age_ms"`
	CheckedAt       *string         `json:"checked_at"`
	TraceSpec       json.RawMessage `json:"trace_spec"`
}

func (r *Result) status(d dim) *Status {
	switch d {
	case dimTerminal:
		return &r.Terminal
	case dimInteraction:
		return &r.Interaction
	case dimExit:
		return &r.Exit
	case dimFilesystem:
		return &r.Filesystem
	case dimProtocol:
		return &r.Protocol
	case dimProcess:
		return &r.Process
	}
	return &r.Shim
}

// DimensionView is one row of a dimension table.
type DimensionView struct {
	Name   string
	Status Status
	// Left and Right count the observations compared on each side (0
	// for a Result decoded from JSON).
	Left, Right int
}

// DimensionViews returns the dimensions in Dimensions order.
func (r Result) DimensionViews() []DimensionView {
	out := make([]DimensionView, numDims)
	for d := range numDims {
		out[d] = DimensionView{dimNames[d], *r.status(d), r.counts[d][0], r.counts[d][1]}
	}
	return out
}

// Divergence statuses.
const (
	DivergenceFound   = "found"
	DivergenceUnknown = "unknown"
	DivergenceNone    = "none"
)

// Divergence is the first divergence: {status:"found", dimension, index,
// left_at_ms, right_at_ms, left, right} (plus left_location and
// right_location, the JSON paths of the two items in their Evidence),
// {status:"unknown", reason} or {status:"none"}. Left or Right is nil, and
// its time and location null, when that side has no item at Index.
type Divergence struct {
	Status        string
	Dimension     string
	Index         int
	LeftAtMS      *int64
	RightAtMS     *int64
	Left          any
	Right         any
	LeftLocation  string
	RightLocation string
	Reason        string
}

// MarshalJSON writes the shape that belongs to the divergence's status.
func (d Divergence) MarshalJSON() ([]byte, error) {
	switch d.Status {
	case DivergenceFound:
		return json.Marshal(struct {
			Status        string  `json:"status"`
			Dimension     string  `json:"dimension"`
			Index         int     `json:"index"`
			LeftAtMS      *int64  `json:"left_at_ms"`
			RightAtMS     *int64  `json:"right_at_ms"`
			Left          any     `json:"left"`
			Right         any     `json:"right"`
			LeftLocation  *string `json:"left_location"`
			RightLocation *string `json:"right_location"`
		}{d.Status, d.Dimension, d.Index, d.LeftAtMS, d.RightAtMS, d.Left, d.Right, strOrNil(d.LeftLocation), strOrNil(d.RightLocation)})
	case DivergenceUnknown:
		return json.Marshal(struct {
			Status string `json:"status"`
			Reason string `json:"reason"`
		}{d.Status, d.Reason})
	}
	return json.Marshal(struct {
		Status string `json:"status"`
	}{DivergenceNone})
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ReasonTruncated is the first-divergence reason when a capture is
// truncated.
const ReasonTruncated = "At least one capture is truncated."

// Compare compares two Process Capture Evidence envelopes, left (the
// authority) and right (the reconstruction).
//
// Preconditions, checked in this order, each failing with an *Error:
// the options are valid and both envelopes given (CodeInvalidRequest);
// CheckCaptures' (both records pass record.Verify, verified once each);
// their manifests' comparison_contract_sha256 are equal
// (CodeIncompatibleContracts); and, with opts.MaxCaptureAgeMS, neither
// completed longer ago than that (CodeStaleCapture).
//
// Compare does not recompute the envelopes' evidence_id: obtain them from
// evidence.Parse, which does, or from evidence.Seal.
//
// opts.Mode selects the rules (ModeBehavior by default); the Result and
// the comparison Evidence's parameters record it. In behavior mode
// (behavior.go, terminal.go) the terminal is the concatenated raw stream
// plus the final rendered screen, located at the first differing byte with
// the differing rows of the screen rendered after the chunk holding it on
// each side (and their character ranges); interaction and shim lists
// compare without their times and sequences, protocol events the same way
// per connection in connection order (behavior_protocol.go), exit and settlement
// without elapsed_ms, checkpoints by name without at_ms, processes as the
// set of command-line paths of the tree. Times still order the first
// divergence. In exact mode the observations are compared index by index
// with RFC 8785 equality (member order irrelevant, numbers as doubles);
// they, and the time each carries for the first divergence, are:
//
//   - terminal: frames and rendered_frames merged by (at_ms, raw first,
//     sequence); at_ms.
//   - interaction: interaction_events; dispatched_at_ms.
//   - exit: the single item {exit, settlement}; no time (it sorts after
//     every timed divergence).
//   - filesystem: filesystem_checkpoints, then {files_after,
//     filesystem_effects} when either is non-empty (at the last
//     checkpoint's at_ms).
//   - protocol: protocol_events, then replay_transitions; at_ms.
//   - process: process_samples; shim: shim_events; at_ms.
//
// A residual unknown whose scope is not one of Dimensions() covers every
// dimension. The first divergence is chosen only among dimensions that are
// changed, added or removed.
func Compare(left, right *evidence.Envelope, opts Options) (Result, error) {
	if err := checkOptions(opts, left == nil, right == nil); err != nil {
		return Result{}, err
	}
	lc, rc, err := CheckCaptures(left, right)
	if err != nil {
		return Result{}, err
	}
	return CompareCaptures(lc, rc, opts)
}

// CompareCaptures is Compare for two captures whose records were already
// verified (NewCapture, CheckCaptures): it reads each record from its
// proof and does not verify it again. A zero Capture is refused
// (CodeInvalidRequest); the other preconditions and the Result are
// Compare's, from the contracts on.
func CompareCaptures(left, right Capture, opts Options) (Result, error) {
	if err := checkOptions(opts, false, false); err != nil {
		return Result{}, err
	}
	mode, _ := opts.Mode.resolve()
	lr, rr, err := readCaptures(left, right)
	if err != nil {
		return Result{}, err
	}
	if err := checkContracts(lr, rr); err != nil {
		return Result{}, err
	}
	params := parameters{Mode: mode}
	if opts.MaxCaptureAgeMS > 0 {
		now := time.Now
		if opts.Now != nil {
			now = opts.Now
		}
		t := now()
		if err := checkAge(t, opts.MaxCaptureAgeMS, lr, rr); err != nil {
			return Result{}, err
		}
		ms, at := opts.MaxCaptureAgeMS, t.UTC().Format(time.RFC3339Nano)
		params.MaxCaptureAgeMS, params.CheckedAt = &ms, &at
	}
	dims := dimensionsOf(mode, lr, rr)
	res := compareRecords(lr, rr, dims)
	res.Mode = mode
	if opts.Trace != nil {
		tr := evaluateTrace(opts.Trace, lr, rr)
		res.Trace = &tr
		params.TraceSpec = opts.Trace.raw
	}
	if opts.DiffLimit > 0 {
		res.Diffs = diffDims(dims, opts.DiffOffset, opts.DiffLimit)
	}
	res.params = params
	return res, nil
}

// checkOptions refuses invalid options and missing envelopes together
// (CodeInvalidRequest).
func checkOptions(opts Options, noLeft, noRight bool) error {
	_, okMode := opts.Mode.resolve()
	if !noLeft && !noRight && opts.MaxCaptureAgeMS >= 0 && okMode && opts.DiffOffset >= 0 {
		return nil
	}
	var issues []Issue
	if noLeft {
		issues = append(issues, Issue{Side: "left", Issue: strictjson.Issue{Path: "$", Code: "missing", Message: "no left envelope"}})
	}
	if noRight {
		issues = append(issues, Issue{Side: "right", Issue: strictjson.Issue{Path: "$", Code: "missing", Message: "no right envelope"}})
	}
	if opts.MaxCaptureAgeMS < 0 {
		issues = append(issues, Issue{Issue: strictjson.Issue{Path: "$.max_capture_age_ms", Code: "out_of_range", Message: "must not be negative"}})
	}
	if !okMode {
		issues = append(issues, Issue{Issue: strictjson.Issue{Path: "$.mode", Code: "invalid_value", Message: fmt.Sprintf("%q is not a comparison mode; use behavior or exact", strictjson.Truncate(string(opts.Mode), 40))}})
	}
	if opts.DiffOffset < 0 {
		issues = append(issues, Issue{Issue: strictjson.Issue{Path: "$.diff_offset", Code: "out_of_range", Message: "must not be negative"}})
	}
	return newError(CodeInvalidRequest, issues)
}

// checkContracts refuses two records that commit to different comparison
// contracts (CodeIncompatibleContracts).
func checkContracts(lr, rr *record) error {
	if lr.contractSHA == rr.contractSHA {
		return nil
	}
	const p = root + ".manifest.comparison_contract_sha256"
	return newError(CodeIncompatibleContracts, []Issue{
		{Side: "left", Issue: strictjson.Issue{Path: p, Code: "contract", Message: "left commits to comparison contract " + lr.contractSHA}},
		{Side: "right", Issue: strictjson.Issue{Path: p, Code: "contract", Message: "right commits to comparison contract " + rr.contractSHA}},
	})
}

func checkAge(now time.Time, maxMS int64, sides ...*record) error {
	var issues []Issue
	for i, r := range sides {
		age := now.Sub(r.completedAt).Milliseconds()
		if age > maxMS {
			issues = append(issues, Issue{Side: sideName(i), Issue: strictjson.Issue{Path: root + ".manifest.completed_at", Code: "too_old", Message: fmt.Sprintf("completed %d ms before the comparison; max_capture_age_ms is %d", age, maxMS)}})
		}
	}
	if issues != nil {
		return newError(CodeStaleCapture, issues)
	}
	return nil
}

func sideName(i int) string {
	if i == 0 {
		return "left"
	}
	return "right"
}

// obs is one observation of a dimension.
type obs struct {
	value any
	at    int64
	hasAt bool
	kind  string // the collection it comes from
	index int
	skip  map[string]bool // top-level members equality ignores (nil: none)
	loc   string          // the JSON path, when it is not kind[index]
}

// obsPair is one position of a dimension's comparison list: the left and the
// right observation (nil when that side has none there).
type obsPair struct {
	l, r *obs
	// differ marks a pair built only because its sides differ (the
	// behavior terminal comparison); its values need no re-comparison.
	differ bool
}

// equal reports whether both sides hold equal observations under the
// mode that built the pair.
func (p obsPair) equal() bool {
	if p.differ || p.l == nil || p.r == nil || p.l.kind != p.r.kind {
		return false
	}
	if p.l.skip == nil {
		return equalJSON(p.l.value, p.r.value)
	}
	return equalSkipping(p.l.value, p.r.value, p.l.skip)
}

// differingFields names the top-level members in which the two sides'
// objects differ under the pair's mode (the members it ignores left out),
// sorted; nil unless both sides are objects.
func (p obsPair) differingFields() []string {
	if p.l == nil || p.r == nil {
		return nil
	}
	x, okX := p.l.value.(map[string]any)
	y, okY := p.r.value.(map[string]any)
	if !okX || !okY {
		return nil
	}
	out := []string{}
	for k, xv := range x {
		if yv, ok := y[k]; !p.l.skip[k] && (!ok || !equalJSON(xv, yv)) {
			out = append(out, k)
		}
	}
	for k := range y {
		if _, ok := x[k]; !ok && !p.l.skip[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// dimObs is one dimension's comparison list and the number of
// observations compared on each side.
type dimObs struct {
	pairs []obsPair
	n     [2]int
}

// zip pairs two observation lists index by index.
func zip(l, r []obs) dimObs {
	d := dimObs{pairs: make([]obsPair, max(len(l), len(r))), n: [2]int{len(l), len(r)}}
	for i := range d.pairs {
		if i < len(l) {
			d.pairs[i].l = &l[i]
		}
		if i < len(r) {
			d.pairs[i].r = &r[i]
		}
	}
	return d
}

// dimensionsOf builds every dimension's comparison list under mode.
func dimensionsOf(mode Mode, l, r *record) [numDims]dimObs {
	if mode == ModeExact {
		var out [numDims]dimObs
		lo, ro := l.observations(), r.observations()
		for d := range numDims {
			out[d] = zip(lo[d], ro[d])
		}
		return out
	}
	return behaviorDimensions(l, r)
}

// observations builds the observation list of every dimension.
func (r *record) observations() [numDims][]obs {
	var o [numDims][]obs
	list := func(name, timeField string) []obs {
		items := r.lists[name]
		out := make([]obs, len(items))
		for i, it := range items {
			m, _ := it.(map[string]any)
			at, ok := integer(m[timeField])
			out[i] = obs{value: it, at: at, hasAt: ok, kind: name, index: i}
		}
		return out
	}
	o[dimTerminal] = mergeTerminal(list("frames", "at_ms"), list("rendered_frames", "at_ms"))
	o[dimInteraction] = list("interaction_events", "dispatched_at_ms")
	o[dimExit] = []obs{{value: map[string]any{"exit": r.exit, "settlement": r.settlement}, kind: "exit", index: -1}}
	fs := list("filesystem_checkpoints", "at_ms")
	if len(r.filesAfter) > 0 || len(r.effects) > 0 {
		final := obs{value: map[string]any{"files_after": r.filesAfter, "filesystem_effects": r.effects}, kind: "final", index: -1}
		if n := len(fs); n > 0 {
			final.at, final.hasAt = fs[n-1].at, fs[n-1].hasAt
		}
		fs = append(fs, final)
	}
	o[dimFilesystem] = fs
	o[dimProtocol] = append(list("protocol_events", "at_ms"), list("replay_transitions", "at_ms")...)
	o[dimProcess] = list("process_samples", "at_ms")
	o[dimShim] = list("shim_events", "at_ms")
	return o
}

// mergeTerminal merges raw and rendered frames by (at_ms, raw first,
// sequence); both inputs are already in (at_ms, sequence) order.
func mergeTerminal(raw, rendered []obs) []obs {
	out := make([]obs, 0, len(raw)+len(rendered))
	i, j := 0, 0
	for i < len(raw) && j < len(rendered) {
		if raw[i].at <= rendered[j].at {
			out = append(out, raw[i])
			i++
		} else {
			out = append(out, rendered[j])
			j++
		}
	}
	out = append(out, raw[i:]...)
	return append(out, rendered[j:]...)
}

// location is the JSON path of an observation in its Evidence.
func (o obs) location(other *obs) string {
	if o.loc != "" {
		return o.loc
	}
	switch o.kind {
	case "exit":
		return root + "." + pickDiffering(o, other, "exit", "settlement")
	case "final":
		return root + "." + pickDiffering(o, other, "files_after", "filesystem_effects")
	}
	return indexPath(root+"."+o.kind, o.index)
}

// pickDiffering names the first of two members of a composite
// observation that differs from the other side's (the first one when
// there is no other side).
func pickDiffering(o obs, other *obs, a, b string) string {
	if other == nil || other.kind != o.kind {
		return a
	}
	x, _ := o.value.(map[string]any)
	y, _ := other.value.(map[string]any)
	if equalJSON(x[a], y[a]) {
		return b
	}
	return a
}

// difference is the earliest differing item of one dimension.
type difference struct {
	index int
	at    int64 // math.MaxInt64 when neither side has a time
}

// diffDim classifies one dimension and finds its earliest differing
// position by min(left, right) time (the lowest position on ties).
func diffDim(d dimObs) (Status, difference) {
	best := difference{index: -1, at: math.MaxInt64}
	for i, p := range d.pairs {
		if p.equal() {
			continue
		}
		t := int64(math.MaxInt64)
		if p.l != nil && p.l.hasAt {
			t = p.l.at
		}
		if p.r != nil && p.r.hasAt {
			t = min(t, p.r.at)
		}
		if best.index < 0 || t < best.at {
			best = difference{i, t}
		}
	}
	switch {
	case best.index < 0:
		return Unchanged, best
	case d.n[0] == 0:
		return Added, best
	case d.n[1] == 0:
		return Removed, best
	}
	return Changed, best
}

// compareRecords compares two valid records with equal contracts.
func compareRecords(l, r *record, dims [numDims]dimObs) Result {
	res := Result{Limitations: []string{}}
	for d := range numDims {
		res.counts[d] = dims[d].n
	}
	if l.truncated || r.truncated {
		for d := range numDims {
			*res.status(d) = Truncated
		}
		res.Status = Truncated
		res.FirstDivergence = Divergence{Status: DivergenceUnknown, Reason: ReasonTruncated}
		for i, rec := range []*record{l, r} {
			if rec.truncated {
				res.Limitations = append(res.Limitations, fmt.Sprintf("The %s capture is truncated; a truncated capture never compares as equivalent.", sideName(i)))
			}
		}
		return res
	}
	var unknown [numDims][]string // why each dimension is unknown
	if !equalJSON(l.normalization, r.normalization) {
		for d := range numDims {
			unknown[d] = append(unknown[d], "the captures were normalized differently")
		}
		res.Limitations = append(res.Limitations, "The captures were normalized differently, so their observations cannot be compared.")
	}
	for i, rec := range []*record{l, r} {
		for _, ru := range rec.residual {
			why := fmt.Sprintf("%s residual unknown: %s", sideName(i), strictjson.Truncate(ru.reason, 500))
			text := fmt.Sprintf("Residual unknown on the %s side (%s): %s", sideName(i), strictjson.Truncate(ru.scope, 64), strictjson.Truncate(ru.reason, 500))
			if d, ok := dimIndex(ru.scope); ok {
				unknown[d] = append(unknown[d], why)
			} else {
				for d := range numDims {
					unknown[d] = append(unknown[d], why)
				}
				text += " (its scope is not a dimension, so it covers every dimension)"
			}
			res.Limitations = append(res.Limitations, text)
		}
	}
	var diffs [numDims]difference
	observed := false
	for d := range numDims {
		st, diff := diffDim(dims[d])
		diffs[d] = diff
		if len(unknown[d]) > 0 {
			st = Unknown
		}
		*res.status(d) = st
		switch st {
		case Added, Removed, Changed:
			observed = true
		}
	}
	res.Status = Unchanged
	switch {
	case observed:
		res.Status = Changed
	case anyStatus(&res, Unknown):
		res.Status = Unknown
	}
	res.FirstDivergence = firstDivergence(&res, diffs, dims, unknown)
	return res
}

func anyStatus(res *Result, s Status) bool {
	for d := range numDims {
		if *res.status(d) == s {
			return true
		}
	}
	return false
}

func dimIndex(name string) (dim, bool) {
	for d, n := range dimNames {
		if n == name {
			return dim(d), true
		}
	}
	return 0, false
}

// firstDivergence picks the earliest differing item among the dimensions
// with an observed difference (ties in Dimensions order).
func firstDivergence(res *Result, diffs [numDims]difference, dims [numDims]dimObs, unknown [numDims][]string) Divergence {
	best := dim(-1)
	for d := range numDims {
		switch *res.status(d) {
		case Added, Removed, Changed:
			if best < 0 || diffs[d].at < diffs[best].at {
				best = d
			}
		}
	}
	if best < 0 {
		if res.Status == Unknown {
			reason := "No observed difference, but "
			sep := ""
			for d := range numDims {
				if len(unknown[d]) > 0 {
					reason += sep + dimNames[d] + " is unknown (" + unknown[d][0] + ")"
					sep = "; "
				}
			}
			return Divergence{Status: DivergenceUnknown, Reason: reason + "."}
		}
		return Divergence{Status: DivergenceNone}
	}
	i := diffs[best].index
	dv := Divergence{Status: DivergenceFound, Dimension: dimNames[best], Index: i}
	lItem, rItem := dims[best].pairs[i].l, dims[best].pairs[i].r
	res.DivergenceFields = dims[best].pairs[i].differingFields()
	if lItem != nil {
		dv.Left, dv.LeftLocation = lItem.value, lItem.location(rItem)
		if lItem.hasAt {
			dv.LeftAtMS = &lItem.at
		}
	}
	if rItem != nil {
		dv.Right, dv.RightLocation = rItem.value, rItem.location(lItem)
		if rItem.hasAt {
			dv.RightAtMS = &rItem.at
		}
	}
	return dv
}

package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	iopkg "io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/compare"
	"github.com/gatehouse/gatehouse/backend/evidence"
)

const compareUsage = `compare-process-captures A.json B.json [TRACE.json] [--mode behavior|exact] [--max-capture-age-ms N]

Compares two Process Capture Evidence files (A, the left side, is the
reference run; B, the right side, the run checked against it) and writes
comparison Evidence to stdout. --mode behavior (the default) asks whether
the program behaved differently: output chunking, times and sample counts
are ignored. --mode exact asks whether the captures recorded the same
observations, item by item, times included. With TRACE.json,
both captures are also checked against that trace spec. With
--max-capture-age-ms, captures completed more than N ms ago are refused.
A summary is printed on stderr when stderr is a terminal.`

func runCompare(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "compare-process-captures", compareUsage)
	maxAge := fs.Int64("max-capture-age-ms", 0, "refuse captures that completed more than `N` ms ago (N ≥ 1)")
	modeName := fs.String("mode", string(compare.ModeBehavior), "`behavior` (did the program behave differently?) or exact (the same observations, times included)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 || len(pos) > 3 {
		return usageError("compare-process-captures takes two capture files and an optional trace spec; run `gatehouse compare-process-captures --help`")
	}
	ageSet := false
	fs.Visit(func(f *flag.Flag) { ageSet = ageSet || f.Name == "max-capture-age-ms" })
	if ageSet && *maxAge < 1 {
		return usageError("--max-capture-age-ms must be a whole number of milliseconds, at least 1")
	}
	mode, ok := compare.ParseMode(*modeName)
	if !ok || *modeName == "" {
		return usageError("--mode must be behavior or exact")
	}
	left, err := readEvidenceFile(pos[0], "left")
	if err != nil {
		return err
	}
	right, err := readEvidenceFile(pos[1], "right")
	if err != nil {
		return err
	}
	// Each file's record is verified here, once, before anything else is
	// read (every failing path of both files); the comparison reads the
	// verified records.
	lc, rc, err := compare.CheckCaptures(left, right)
	if err != nil {
		return compareError(err)
	}
	opts := compare.Options{MaxCaptureAgeMS: *maxAge, Mode: mode}
	if len(pos) == 3 {
		spec, err := readTraceSpecFile(pos[2])
		if err != nil {
			return err
		}
		opts.Trace = spec
	}
	res, err := compare.CompareCaptures(lc, rc, opts)
	if err != nil {
		return compareError(err)
	}
	out, err := compare.Envelope(res, left, right)
	if err != nil {
		return errorf("internal", CategoryInternal, "could not seal the comparison Evidence: %v", err)
	}
	data, err := json.Marshal(out)
	if err != nil {
		return errorf("internal", CategoryInternal, "could not encode the comparison Evidence: %v", err)
	}
	if _, err := fmt.Fprintf(io.Stdout, "%s\n", data); err != nil {
		return errorf("write_failed", CategoryIO, "could not write the comparison Evidence to stdout: %v", err)
	}
	if io.stderrIsTerminal() {
		writeCompareSummary(io.Stderr, res)
	}
	return nil
}

// readInputFile reads a file of at most limit bytes, refusing larger ones
// before reading them.
func readInputFile(path, what string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errorf("not_found", CategoryNotFound, "%s %s does not exist", what, path)
		}
		return nil, errorf("read_failed", CategoryIO, "cannot read %s %s: %v", what, path, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > limit {
		return nil, errorf("input_too_large", CategoryInvalid, "%s %s is %d bytes; files above %d bytes are refused", what, path, st.Size(), limit)
	}
	data, err := iopkg.ReadAll(iopkg.LimitReader(f, limit+1))
	if err != nil {
		return nil, errorf("read_failed", CategoryIO, "cannot read %s %s: %v", what, path, err)
	}
	if int64(len(data)) > limit {
		return nil, errorf("input_too_large", CategoryInvalid, "%s %s is larger than %d bytes; such files are refused", what, path, limit)
	}
	return data, nil
}

// readEvidenceFile reads and strictly parses one Evidence file.
func readEvidenceFile(path, side string) (*evidence.Envelope, error) {
	data, err := readInputFile(path, side+" capture", evidence.MaxEnvelopeBytes)
	if err != nil {
		return nil, err
	}
	e, issues := evidence.Parse(data)
	if len(issues) == 0 {
		return e, nil
	}
	code, msg := "invalid_evidence", "%s capture %s is not valid Evidence; details.issues names every failing path"
	for _, is := range issues {
		if is.Code == evidence.CodeIDMismatch {
			code, msg = "evidence_integrity_mismatch", "%s capture %s does not match its evidence_id: it was altered after it was sealed"
		}
	}
	ce := errorf(code, CategoryInvalid, msg, side, path)
	ce.Details = map[string]any{"side": side, "file": path, "issues": issues, "retryable": false,
		"remediation": "Pass Evidence exactly as gatehouse capture-process wrote it."}
	return nil, ce
}

// readTraceSpecFile reads and strictly parses a trace spec.
func readTraceSpecFile(path string) (*compare.TraceSpec, error) {
	data, err := readInputFile(path, "trace spec", compare.MaxTraceSpecBytes)
	if err != nil {
		return nil, err
	}
	spec, err := compare.ParseTraceSpec(data)
	if err != nil {
		return nil, compareError(err)
	}
	return spec, nil
}

// compareError turns a structured comparison error into a CLI error.
func compareError(err error) error {
	var ce *compare.Error
	if !errors.As(err, &ce) {
		return errorf("compare_failed", CategoryInternal, "comparison failed: %v", err)
	}
	e := errorf(ce.Code, ce.Category, "%s", ce.Message)
	e.Details = map[string]any{"issues": ce.Issues, "retryable": ce.Retryable, "remediation": ce.Remediation}
	return e
}

// writeCompareSummary prints a human summary of a comparison: the
// dimension table, the first divergence with both sides' values, the trace
// verdict and the limitations. Every recorded text is sanitized.
func writeCompareSummary(w iopkg.Writer, res compare.Result) {
	fmt.Fprintf(w, "Comparison: %s (%s mode)\n\n", res.Status, res.Mode)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  DIMENSION\tSTATUS\tLEFT\tRIGHT")
	for _, d := range res.DimensionViews() {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\n", d.Name, d.Status, d.Left, d.Right)
	}
	tw.Flush()
	fd := res.FirstDivergence
	fmt.Fprintln(w)
	switch fd.Status {
	case compare.DivergenceFound:
		fmt.Fprintf(w, "First divergence: %s, item %d\n", fd.Dimension, fd.Index)
		fmt.Fprintf(w, "  left  %s\n", describeItem(fd.LeftLocation, fd.LeftAtMS, fd.Left))
		fmt.Fprintf(w, "  right %s\n", describeItem(fd.RightLocation, fd.RightAtMS, fd.Right))
		for _, line := range divergenceRows(fd) {
			fmt.Fprintf(w, "  %s\n", visibleText(line))
		}
	case compare.DivergenceUnknown:
		fmt.Fprintf(w, "First divergence: unknown — %s\n", visibleText(fd.Reason))
	default:
		fmt.Fprintln(w, "First divergence: none")
	}
	if t := res.Trace; t != nil {
		fmt.Fprintf(w, "\nTrace: %s (left %s, right %s)\n", t.Verdict, t.Left.Status, t.Right.Status)
		if d := t.Diagnostic; d != nil {
			fmt.Fprintf(w, "  %s on %s: %s\n", d.Kind, d.Side, visibleText(d.Message))
		}
	}
	if len(res.Limitations) > 0 {
		fmt.Fprintln(w, "\nLimitations:")
		for _, l := range res.Limitations {
			fmt.Fprintf(w, "  - %s\n", visibleText(l))
		}
	}
}

// divergenceRows names the screen rows a behavior-mode terminal
// divergence shows, as "row N: 'left' → 'right'" (none otherwise).
func divergenceRows(fd compare.Divergence) []string {
	rows := func(v any) map[int]string {
		out := map[int]string{}
		m, _ := v.(map[string]any)
		list, _ := m["rows"].([]any)
		for _, r := range list {
			rm, _ := r.(map[string]any)
			n, err := strconv.Atoi(fmt.Sprint(rm["row"]))
			if text, ok := rm["text"].(string); ok && err == nil {
				out[n] = text
			}
		}
		return out
	}
	l, r := rows(fd.Left), rows(fd.Right)
	var nums []int
	for n := range l {
		nums = append(nums, n)
	}
	for n := range r {
		if _, ok := l[n]; !ok {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	var out []string
	for _, n := range nums {
		out = append(out, fmt.Sprintf("row %d: %q → %q", n+1, l[n], r[n]))
	}
	return out
}

// describeItem renders one side of a divergence on one line.
func describeItem(location string, at *int64, value any) string {
	if location == "" {
		return "(nothing)"
	}
	var b strings.Builder
	b.WriteString(strings.TrimPrefix(location, "$.normalized_result."))
	if at != nil {
		fmt.Fprintf(&b, " at %d ms", *at)
	}
	raw, err := json.Marshal(value)
	if err != nil {
		raw = []byte("?")
	}
	s := string(raw)
	if len(s) > 400 {
		cut := 400
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	b.WriteString(": ")
	b.WriteString(visibleText(s))
	return b.String()
}

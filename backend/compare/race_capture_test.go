package compare

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// raceScript starts two background writers; $1 and $2 delay the first
// and the second, so the caller decides which one writes first. The
// arguments are outside the comparison contract, so both runs share it.
const raceScript = `(sleep "$1"; echo one) & (sleep "$2"; echo two) & wait`

// captureRace captures /bin/sh -c raceScript sh delay1 delay2 for real
// and returns its sealed Process Capture Evidence, with why (non-empty)
// when the two writers did not appear as two raw frames in the order the
// delays force: a loaded machine can start the first writer's sleep and
// echo later than the second one's, or read both lines as one chunk.
func captureRace(t *testing.T, sup *proctree.Supervisor, workdir, delay1, delay2 string) (e *evidence.Envelope, why string) {
	t.Helper()
	e, rec := captureSh(t, sup, workdir, 10, nil, "-c", raceScript, "sh", delay1, delay2)
	var data []string
	for _, f := range rec.Frames {
		data = append(data, f.Data)
	}
	want := []string{"one\r\n", "two\r\n"}
	if delay1 > delay2 {
		want = []string{"two\r\n", "one\r\n"}
	}
	if strings.Join(data, "|") != strings.Join(want, "|") {
		return e, fmt.Sprintf("raw frames %q, want %q (exit %+v)", data, want, rec.Exit)
	}
	return e, ""
}

// timingScales are the factors TestRacingWritersOfRealCaptures multiplies
// its delays by, one try each, until the captured programs did what the
// comparison needs (the writers in the forced order, the readers alive
// until their input); the comparison is checked only on such captures.
var timingScales = []int{1, 2, 4, 8}

// captureSh captures /bin/sh with args for real, its recorded times
// bucketed to bucketMS and events (if any) sent to it, and returns its
// sealed Process Capture Evidence and the record.
func captureSh(t *testing.T, sup *proctree.Supervisor, workdir string, bucketMS int, events []any, args ...string) (*evidence.Envelope, *capture.Record) {
	t.Helper()
	m := map[string]any{
		"approved": true, "executable": "/bin/sh", "arguments": args,
		"working_directory": workdir, "environment": map[string]string{"PATH": "/usr/bin:/bin"},
		"normalization": map[string]any{"time_bucket_ms": bucketMS},
	}
	if events != nil {
		m["events"] = events
	}
	rec := captureScenario(t, sup, m, []string{"PATH"}, "compare-race")
	return sealCapture(t, rec), rec
}

// TestRacingWritersOfRealCaptures captures the same program twice, its two
// background writers racing in opposite orders, and compares the captures
// with a trace spec that leaves the writers unordered (equivalent) and
// with one that orders them (different).
func TestRacingWritersOfRealCaptures(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("process capture runs on Linux")
	}
	sup, err := proctree.NewSupervisor(proctree.Options{}) // the only one of this test process
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	workdir := t.TempDir()
	var oneFirst, twoFirst *evidence.Envelope
	for i, scale := range timingScales {
		// Two writers, 500 ms apart (scaled), racing in opposite orders.
		delay := fmt.Sprintf("%d.%d", 5*scale/10, 5*scale%10)
		var why1, why2 string
		oneFirst, why1 = captureRace(t, sup, workdir, "0", delay)
		twoFirst, why2 = captureRace(t, sup, workdir, delay, "0")
		if why1 == "" && why2 == "" {
			break
		}
		if i == len(timingScales)-1 {
			t.Fatalf("the writers never appeared in the forced order: %s %s", why1, why2)
		}
		t.Logf("delays ×%d: %s %s; trying again with longer delays", scale, why1, why2)
	}

	// The same program twice: real pids differ between the runs, but with
	// pid normalization the process trees compare equal. Sample times
	// depend on the scheduler (a loaded CI machine took its first sample
	// at 50 ms in one run and 60 ms in the other), so these captures
	// bucket time to capture.MaxTimeBucketMS: every time is 0.
	// The children exec nothing: a child sampled between its fork and an
	// exec still shows its parent's command line, an extra sample in one
	// run only (a loaded machine did so with "sleep 0.3 & sleep 0.4 &").
	// Two forked readers, each ended by one line of timed input, keep the
	// root's command line from fork to exit. Both runs must have sampled
	// the root and both readers (a loaded machine can start the shell
	// after the input came, so that the readers end before a sample):
	// otherwise both are captured again with the input later.
	tree := "exec 3<&0; read a <&3 & read b <&3 & wait; echo done"
	var a, b *evidence.Envelope
	for i, scale := range timingScales {
		lines := []any{
			map[string]any{"type": "input", "at_ms": 500 * scale, "data": "one\r"},
			map[string]any{"type": "input", "at_ms": 600 * scale, "data": "two\r"},
		}
		var ra, rb *capture.Record
		a, ra = captureSh(t, sup, workdir, capture.MaxTimeBucketMS, lines, "-c", tree)
		b, rb = captureSh(t, sup, workdir, capture.MaxTimeBucketMS, lines, "-c", tree)
		bad := ""
		for _, r := range []*capture.Record{ra, rb} {
			if n := len(r.ProcessSamples); n != 3 || r.Exit.Code == nil || *r.Exit.Code != 0 {
				bad += fmt.Sprintf("process samples %+v (want the root and two readers), exit %+v; ", r.ProcessSamples, r.Exit)
			}
		}
		if bad == "" {
			break
		}
		if i == len(timingScales)-1 {
			t.Fatal(bad)
		}
		t.Logf("input ×%d: %strying again with the input later", scale, bad)
	}
	if same, err := Compare(a, b, Options{Mode: ModeExact}); err != nil || same.Process != Unchanged {
		t.Errorf("same program twice: %+v %v", same, err)
	}

	var lm, rm struct {
		Manifest struct {
			Contract string `json:"comparison_contract_sha256"`
			Scenario string `json:"full_scenario_sha256"`
		} `json:"manifest"`
	}
	json.Unmarshal(oneFirst.NormalizedResult, &lm)
	json.Unmarshal(twoFirst.NormalizedResult, &rm)
	if lm.Manifest.Contract == "" || lm.Manifest.Contract != rm.Manifest.Contract || lm.Manifest.Scenario == rm.Manifest.Scenario {
		t.Fatalf("contracts %s / %s, scenarios %s / %s: the runs must differ only outside the contract",
			lm.Manifest.Contract, rm.Manifest.Contract, lm.Manifest.Scenario, rm.Manifest.Scenario)
	}

	const events = `{"id":"one","source":"terminal_raw","exact":{"data":"one\r\n"},"ignore_fields":["sequence","at_ms"]},` +
		`{"id":"two","source":"terminal_raw","exact":{"data":"two\r\n"},"ignore_fields":["sequence","at_ms"]}`
	unordered := mustSpec(t, spec(events, `{"kind":"partial_order","unordered_groups":[{"events":["one","two"]}]}`))
	ordered := mustSpec(t, spec(events, `{"kind":"partial_order","happens_before":[{"before":"one","after":"two"}]}`))

	res, err := Compare(oneFirst, twoFirst, Options{Mode: ModeExact, Trace: unordered})
	if err != nil {
		t.Fatal(err)
	}
	if res.Terminal != Changed { // the raw observations themselves differ
		t.Errorf("terminal = %s", res.Terminal)
	}
	tr := res.Trace
	if tr.Verdict != VerdictEquivalent || tr.Diagnostic != nil || tr.Left.Status != SidePass || tr.Right.Status != SidePass {
		t.Fatalf("unordered: %+v (diagnostic %+v)", tr, tr.Diagnostic)
	}
	steps := func(s TraceSide) string {
		var ids []string
		for _, st := range s.Trace {
			ids = append(ids, st.EventID)
		}
		return strings.Join(ids, ",")
	}
	if steps(tr.Left) != "one,two" || steps(tr.Right) != "two,one" {
		t.Errorf("traces %s / %s", steps(tr.Left), steps(tr.Right))
	}
	if c := tr.Left.SatisfiedConstraints; c == nil || len(c.UnorderedGroups) != 1 {
		t.Errorf("constraints %+v", c)
	}
	if _, err := Envelope(res, oneFirst, twoFirst); err != nil {
		t.Errorf("Envelope: %v", err)
	}

	res, err = Compare(oneFirst, twoFirst, Options{Mode: ModeExact, Trace: ordered})
	if err != nil {
		t.Fatal(err)
	}
	tr = res.Trace
	if tr.Verdict != VerdictDifferent || tr.Left.Status != SidePass || tr.Right.Status != SideFail {
		t.Fatalf("ordered: %+v (diagnostic %+v)", tr, tr.Diagnostic)
	}
	if d := tr.Diagnostic; d == nil || d.Kind != DiagEdge || d.Side != "right" || strings.Join(d.EventIDs, ",") != "one,two" || len(d.Locations) != 2 {
		t.Errorf("diagnostic %+v", tr.Diagnostic)
	}
}

// rendererNode is the Node that a test capture's renderer helper runs on:
// the one on PATH, as an absolute path (the test is skipped without it).
func rendererNode(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	node, _ = filepath.Abs(node)
	return node
}

// sealCapture seals rec as the capture Evidence the app would save.
func sealCapture(t testing.TB, rec *capture.Record) *evidence.Envelope {
	t.Helper()
	raw, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	e := &evidence.Envelope{
		Provider:      evidence.Provider{ID: evidence.ProcessProviderID, Name: "Gatehouse process capture", Version: "test"},
		PredicateType: evidence.PredicateProcessCapture, Operation: evidence.OperationCaptureProcess,
		Parameters: json.RawMessage(`{}`), NormalizedResult: raw,
		Confidence: evidence.Observed, Authority: evidence.AuthorityControlledReplay,
		Limitations: append([]string{}, rec.Limitations...),
	}
	if err := evidence.Seal(e); err != nil {
		t.Fatal(err)
	}
	return e
}

// captureScenario parses scenario m and captures it under an open operator
// policy that passes only the named environment variables; a refused
// scenario or a failed capture fails the test. runPrefix starts the run id.
func captureScenario(t testing.TB, sup *proctree.Supervisor, m map[string]any, allowedEnv []string, runPrefix string) *capture.Record {
	t.Helper()
	doc, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	sc, issues := capture.ParseScenario(doc)
	if len(issues) > 0 {
		t.Fatalf("scenario rejected: %v", issues)
	}
	pol := policy.DefaultCaptureSettings()
	pol.Enabled, pol.AllowExternalNetwork = true, true
	pol.ExecutableRoots, pol.WorkingRoots = []string{"/"}, []string{"/"}
	pol.AllowedEnv = allowedEnv
	rec, err := capture.Capture(context.Background(), sup, sc, capture.Options{
		Policy: pol, TempDir: t.TempDir(), GatehouseVersion: "test", ProviderVersion: "test", Node: rendererNode(t),
		RunID: fmt.Sprintf("%s-%d-%d", runPrefix, os.Getpid(), time.Now().UnixNano()),
	})
	if err != nil {
		t.Fatalf("capture: %v", err)
	}
	return rec
}

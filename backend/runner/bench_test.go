package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/artifact"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// BenchmarkCheckedRun measures one whole checked attempt of a trivial .mjs
// script: capture + revision, staging, runtime recheck, spawn, protocol
// I/O, verified tree cleanup, result validation and recording.
func BenchmarkCheckedRun(b *testing.B) {
	dir, ex := testBundle(b, "echo.mjs", nil)
	req := request(b, ex, `{"n":1}`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		checkedRun(b, dir, ex.Manifest.Files, req)
	}
}

// checkedRun captures the bundle afresh and runs it once, checked.
func checkedRun(b *testing.B, dir string, files []string, req Request) {
	snap, err := artifact.Capture(dir, files)
	if err != nil {
		b.Fatal(err)
	}
	req.Snapshot = snap
	r := testRunner.Run(context.Background(), req)
	if r.Envelope.Status != StatusSucceeded {
		b.Fatalf("%+v", r.Envelope)
	}
	// Measured with confinement and the strongest ownership on.
	if mech, _ := testRunner.Ownership(); r.Envelope.Cleanup.Mechanism != mech || !r.Envelope.Confinement.Confined() {
		b.Fatalf("benchmarked without full containment: %+v %+v", r.Envelope.Cleanup, r.Envelope.Confinement)
	}
}

// BenchmarkCheckedVsBare alternates one bare run and one checked run (with
// Landlock confinement, network namespace and a PID namespace per attempt
// where the machine offers them) per iteration, so machine drift hits both
// equally, and reports the mean of each and their ratio (the goal is
// ≤ 1.15), and the same from the medians (ratio-med): on a shared, loaded
// machine a few slow Node start-ups move the means more than the whole
// difference being measured.
func BenchmarkCheckedVsBare(b *testing.B) {
	dir, ex := testBundle(b, "echo.mjs", nil)
	req := request(b, ex, `{"n":1}`)
	bare := bareRunner(b)
	var tBare, tChecked time.Duration
	var bares, checkeds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		cleanup := bare()
		t1 := time.Now()
		cleanup()
		t1b := time.Now()
		checkedRun(b, dir, ex.Manifest.Files, req)
		t2 := time.Now()
		tBare += t1.Sub(t0)
		tChecked += t2.Sub(t1b)
		bares, checkeds = append(bares, t1.Sub(t0)), append(checkeds, t2.Sub(t1b))
	}
	b.ReportMetric(float64(tBare.Microseconds())/float64(b.N)/1000, "bare-ms")
	b.ReportMetric(float64(tChecked.Microseconds())/float64(b.N)/1000, "checked-ms")
	b.ReportMetric(float64(tChecked)/float64(tBare), "ratio")
	mb, mc := median(bares), median(checkeds)
	b.ReportMetric(float64(mb.Microseconds())/1000, "bare-med-ms")
	b.ReportMetric(float64(mc.Microseconds())/1000, "checked-med-ms")
	b.ReportMetric(float64(mc)/float64(mb), "ratio-med")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkBareNode is the baseline: `node script.mjs < input.json` with
// stdout read to the end, started and reaped directly.
func BenchmarkBareNode(b *testing.B) {
	run := bareRunner(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cleanup := run()
		b.StopTimer()
		cleanup()
		b.StartTimer()
	}
}

// bareRunner returns a function that runs the echo script once, bare, and
// returns the (untimed) removal of the empty per-process cgroup the
// supervisor gives every start.
func bareRunner(b *testing.B) func() func() {
	dir := b.TempDir()
	script := filepath.Join("testdata", "scripts", "echo.mjs")
	abs, _ := filepath.Abs(script)
	input := filepath.Join(dir, "input.json")
	os.WriteFile(input, []byte(`{"n":1}`), 0o644)
	return func() func() {
		in, _ := os.Open(input)
		rd, wr, _ := os.Pipe()
		devnull, _ := os.Open(os.DevNull)
		t, err := testSup.Start(proctree.Spec{Path: testPin.Path, Args: []string{"node", abs}, Env: []string{"BENCH=1"},
			Dir: dir, Files: []*os.File{in, wr, devnull}, Marker: "BENCH=1"})
		wr.Close()
		in.Close()
		devnull.Close()
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, rd)
		rd.Close()
		<-t.Exited()
		return func() { t.Terminate(0) }
	}
}

package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/gatehouse/gatehouse/internal/benchproc"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchOutputBytes is what the benchmark command writes to the terminal:
// the limits.output_bytes maximum.
const benchOutputBytes = 10_000_000

// benchCommand writes exactly benchOutputBytes bytes to its terminal (as
// the PTY delivers them): 100-byte lines of 99 characters and a newline
// written with the terminal's onlcr translation turned off, so the
// kernel does not add a carriage return per line and the bytes the
// capture reads are the bytes the command wrote. script(1) runs the same
// command.
const benchCommand = `stty -onlcr; yes 'The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs 0123456789abcd' | head -c 10000000`

// benchChildEnv selects the child role of BenchmarkCaptureVsScript in a
// re-executed test binary; its value is the working directory.
const benchChildEnv = "GATEHOUSE_BENCH_CAPTURE_CHILD"

// BenchmarkCaptureVsScript compares a capture of a command writing 10 MB
// to its terminal (limits.output_bytes raised to 10,000,000) with
// `script -q -c CMD /dev/null` running the same command, alternating one
// run of each per iteration so machine drift hits both equally. Both run
// as child processes of this benchmark (see runMeasured), so their wall
// times include process start and their peak memory is a maxrss (the
// largest of the process and its waited-for descendants). The capture
// runs in a re-executed test binary (TestCaptureBenchChild) that opens a
// supervisor, captures, and encodes the record into memory
// (Record.AppendJSON), as `gatehouse capture-process` must hold it to
// seal it. It reports the mean
// wall and CPU time of each, the wall ratio (goal ≤ 2, docs/benchmarks.md), both peaks, and
// the mean number of raw frames of a capture, and capture-ahead-only-ms,
// the time of a second capture in the child whose helper was started
// ahead (Renderers). capture-maxrss-MB is the
// largest process of the capture's side (usually the renderer helper's
// Node, whose resident set is mostly the node binary's own pages, shared
// with every other Node); capture-go-maxrss-MB is the capturing Go
// process alone when Capture returns, capture+marshal-go-maxrss-MB the
// same after the record's JSON encoding, and capture-helper-maxrss-MB the
// largest of its children.
func BenchmarkCaptureVsScript(b *testing.B) {
	scriptPath, err := exec.LookPath("script")
	if err != nil {
		b.Skip("script(1) is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	// The renderer helper's startup snapshot is built (as the first
	// capture of a data directory builds it) by a child of its own before
	// the timed runs, which then read and verify it as every later
	// capture-process does; GATEHOUSE_BENCH_LOADER=1 measures the loader
	// instead (no snapshot).
	if os.Getenv("GATEHOUSE_BENCH_LOADER") == "" {
		node, err := exec.LookPath("node")
		if err != nil {
			b.Skip("node is not on PATH")
		}
		sum, err := fileSHA256(node)
		if err != nil {
			b.Fatal(err)
		}
		b.Setenv(benchSnapshotsEnv, b.TempDir())
		b.Setenv(benchNodeSumEnv, sum)
		var warm strings.Builder
		d, cpu, _ := runMeasured(b, &warm, self, "-test.run=^TestCaptureBenchChildWarm$", "-test.count=1")
		if !strings.Contains(warm.String(), "WARM startup snapshot") {
			b.Fatalf("building the snapshot: %s", warm.String())
		}
		// reported after the runs (ResetTimer drops metrics)
		defer b.ReportMetric(float64(d.Milliseconds()), "snapshot-build-ms")
		defer b.ReportMetric(float64(cpu.Milliseconds()), "snapshot-build-cpu-ms")
	}
	var tScript, tCapture, tInside, tAhead, cpuScript, cpuCapture time.Duration
	var rssScript, rssCapture int64
	truncated, frames := 0, 0
	var goPeak, goCapturePeak, helperPeak int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, cpu, rss := runMeasured(b, nil, scriptPath, "-q", "-c", benchCommand, "/dev/null")
		tScript += d
		cpuScript += cpu
		rssScript = max(rssScript, rss)
		var report strings.Builder
		d, cpu, rss = runMeasured(b, &report, self, "-test.run=^TestCaptureBenchChild$", "-test.count=1")
		var ahead strings.Builder // not counted in the capture's wall, CPU or peaks
		runMeasured(b, &ahead, self, "-test.run=^TestCaptureBenchChildAhead$", "-test.count=1")
		tCapture += d
		cpuCapture += cpu
		rssCapture = max(rssCapture, rss)
		r, a := benchReport(b, report.String()), benchReport(b, ahead.String())
		if r.Truncated { // rendered frames past their output_bytes budget: many small chunks
			truncated++
			b.Logf("run %d: truncated: %s", i, r.Limitation)
		}
		frames += r.Frames
		tInside += time.Duration(r.CaptureNS)
		tAhead += time.Duration(a.AheadCaptureNS)
		goPeak, helperPeak = max(goPeak, r.GoPeakKB), max(helperPeak, r.ChildrenPeakKB)
		goCapturePeak = max(goCapturePeak, r.GoCapturePeakKB)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tScript.Milliseconds())/n, "script-ms")
	b.ReportMetric(float64(tCapture.Milliseconds())/n, "capture-ms")
	b.ReportMetric(float64(tInside.Milliseconds())/n, "capture-only-ms")
	b.ReportMetric(float64(tAhead.Milliseconds())/n, "capture-ahead-only-ms")
	b.ReportMetric(float64(tCapture)/float64(tScript), "ratio")
	b.ReportMetric(float64(cpuScript.Milliseconds())/n, "script-cpu-ms")
	b.ReportMetric(float64(cpuCapture.Milliseconds())/n, "capture-cpu-ms")
	b.ReportMetric(float64(rssScript)/1024, "script-maxrss-MB")
	b.ReportMetric(float64(rssCapture)/1024, "capture-maxrss-MB")
	b.ReportMetric(float64(goCapturePeak)/1024, "capture-go-maxrss-MB")
	b.ReportMetric(float64(goPeak)/1024, "capture+marshal-go-maxrss-MB")
	b.ReportMetric(float64(helperPeak)/1024, "capture-helper-maxrss-MB")
	b.ReportMetric(float64(frames)/n, "raw-frames")
	b.ReportMetric(float64(truncated), "truncated-runs")
}

// benchReport parses a child's report.
func benchReport(b *testing.B, out string) benchChildReport {
	var r benchChildReport
	line := out
	if k := strings.Index(line, "BENCH "); k >= 0 {
		line = line[k+len("BENCH "):]
		line = line[:strings.IndexByte(line, '\n')]
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.RawBytes != benchOutputBytes {
		b.Fatalf("capture child: %v, report %q", err, out)
	}
	return r
}

// runMeasured runs path with args, stdout to out (nil = /dev/null), and
// returns its wall time, its CPU time (user and system, with its waited-for
// descendants) and its peak resident set in KiB (benchproc.Run says how
// the peak is read).
func runMeasured(b *testing.B, out io.Writer, path string, args ...string) (time.Duration, time.Duration, int64) {
	b.Helper()
	r, err := benchproc.Run(b.TempDir(), out, []string{benchChildEnv + "=" + b.TempDir()}, path, args...)
	if err != nil {
		b.Fatal(err)
	}
	return r.Wall, r.CPU, r.MaxRSSKiB
}

// benchChildReport is what TestCaptureBenchChild prints after "BENCH ".
type benchChildReport struct {
	CaptureNS     int64  `json:"capture_ns"`
	MarshalNS     int64  `json:"marshal_ns"`
	RawBytes      int    `json:"raw_bytes"`
	Frames        int    `json:"frames"`
	Rendered      int    `json:"rendered_frames"`
	Truncated     bool   `json:"truncated"`
	Limitation    string `json:"limitation"` // the last one: which limit, when truncated
	HeapPeakBytes int64  `json:"heap_sys_bytes"`
	// GoPeakKB is the capturing process's own peak resident set (VmHWM),
	// ChildrenPeakKB the largest of its waited-for children's (the
	// renderer helper's Node, the target's processes), in KiB.
	GoPeakKB       int64 `json:"go_peak_kb"`
	ChildrenPeakKB int64 `json:"children_peak_kb"`
	// GoCapturePeakKB is GoPeakKB when Capture returned, before the
	// record was marshalled.
	GoCapturePeakKB int64 `json:"go_capture_peak_kb"`
	// EncodedBytes is the size of the record's JSON.
	EncodedBytes int `json:"encoded_bytes"`
	// AheadCaptureNS is the time of a capture whose renderer helper was
	// started ahead (TestCaptureBenchChildAhead), as in a process that
	// captures more than once.
	AheadCaptureNS int64 `json:"ahead_capture_ns"`
}

// ownPeakKB is this process's peak resident set (VmHWM) in KiB, or 0.
func ownPeakKB() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// TestCaptureBenchChild is the capture side of BenchmarkCaptureVsScript;
// it only runs in the benchmark's child process.
func TestCaptureBenchChild(t *testing.T) {
	work := os.Getenv(benchChildEnv)
	if work == "" {
		t.Skip("runs only as the child of BenchmarkCaptureVsScript")
	}
	sc := parseOK(t, mustJSON(t, obj{"approved": true, "executable": "/bin/sh", "arguments": []any{"-c", benchCommand},
		"working_directory": work, "environment": obj{"PATH": "/usr/bin:/bin"},
		"limits": obj{"output_bytes": benchOutputBytes, "frames": 100000}}))
	sum, snaps := benchSnapshots()
	opts := Options{Policy: openPolicy(), TempDir: work, Node: testNode(t), NodeSHA256: sum, Snapshots: snaps, RunID: fmt.Sprintf("capture-bench-%d", os.Getpid())}
	sup := newSupervisor(t)
	start := time.Now()
	rec, err := Capture(context.Background(), sup, sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	captured := time.Since(start)
	if snaps != nil && !strings.Contains(snaps.Status(), "verified") {
		t.Fatalf("the renderer did not start from the warmed snapshot: %s", snaps.Status())
	}
	capturePeak := ownPeakKB() // before the record is marshalled
	start = time.Now()
	encoded, err := rec.AppendJSON(nil, false) // held in memory, as capture-process holds it to seal it
	if err != nil {
		t.Fatal(err)
	}
	marshalled := time.Since(start)
	raw := 0
	for _, f := range rec.Frames {
		raw += len(f.Data)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) //nolint:errcheck // 0 when it fails
	b, _ := json.Marshal(benchChildReport{captured.Nanoseconds(), marshalled.Nanoseconds(), raw, len(rec.Frames),
		len(rec.RenderedFrames), rec.Truncated, rec.Limitations[len(rec.Limitations)-1], int64(ms.HeapSys), ownPeakKB(), children.Maxrss, capturePeak, len(encoded), 0})
	fmt.Printf("BENCH %s\n", b)
}

// Where the benchmark's children keep the renderer helper's startup
// snapshots, and the SHA-256 of their Node (hashed once, by the parent,
// as the app keeps the pin's digest).
const (
	benchSnapshotsEnv = "GATEHOUSE_BENCH_SNAPSHOTS"
	benchNodeSumEnv   = "GATEHOUSE_BENCH_NODE_SHA256"
)

// benchSnapshots are the children's snapshots, none when the benchmark
// measures the loader.
func benchSnapshots() (string, *RendererSnapshots) {
	dir := os.Getenv(benchSnapshotsEnv)
	if dir == "" {
		return "", nil
	}
	return os.Getenv(benchNodeSumEnv), NewRendererSnapshots(dir)
}

// TestCaptureBenchChildWarm builds the benchmark's renderer snapshot
// before the timed runs; it only runs in the benchmark's child process.
func TestCaptureBenchChildWarm(t *testing.T) {
	if os.Getenv(benchChildEnv) == "" {
		t.Skip("runs only as the child of BenchmarkCaptureVsScript")
	}
	sum, snaps := benchSnapshots()
	h := RendererHelper{Node: testNode(t), Supervisor: newSupervisor(t), NodeSHA256: sum, Snapshots: snaps}
	if err := snaps.Prepare(h); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("WARM %s\n", snaps.Status())
}

// benchAheadIdle is how long TestCaptureBenchChildAhead's helper waits
// idle before its capture.
const benchAheadIdle = time.Second

// TestCaptureBenchChildAhead is the capture of BenchmarkCaptureVsScript
// with its renderer helper started ahead (Renderers) and ready, which it
// does not time; it only runs in the benchmark's child process.
func TestCaptureBenchChildAhead(t *testing.T) {
	work := os.Getenv(benchChildEnv)
	if work == "" {
		t.Skip("runs only as the child of BenchmarkCaptureVsScript")
	}
	sc := parseOK(t, mustJSON(t, obj{"approved": true, "executable": "/bin/sh", "arguments": []any{"-c", benchCommand},
		"working_directory": work, "environment": obj{"PATH": "/usr/bin:/bin"},
		"limits": obj{"output_bytes": benchOutputBytes, "frames": 100000}}))
	sup := newSupervisor(t)
	sum, snaps := benchSnapshots()
	renderers := NewRenderers(RendererHelper{Node: testNode(t), Supervisor: sup, NodeSHA256: sum, Snapshots: snaps})
	defer renderers.Close()
	renderers.mu.Lock()
	ready := <-renderers.next
	renderers.next <- ready
	renderers.mu.Unlock()
	// a helper started ahead waits idle for its capture (the app starts
	// the next when a capture ends) and warms up meanwhile (helper.mjs
	// warmWhileIdle): it is given that time, untimed
	time.Sleep(benchAheadIdle)
	opts := Options{Policy: openPolicy(), TempDir: work, Renderers: renderers, RunID: fmt.Sprintf("capture-bench-ahead-%d", os.Getpid())}
	start := time.Now()
	rec, err := Capture(context.Background(), sup, sc, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(benchChildReport{RawBytes: len(output(rec)), AheadCaptureNS: time.Since(start).Nanoseconds()})
	fmt.Printf("BENCH %s\n", b)
}

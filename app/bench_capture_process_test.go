package app

import (
	"context"
	"encoding/json"
	"github.com/gatehouse/gatehouse/internal/benchproc"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/policy"
)

// benchProcessCommand writes 10 MB (the limits.output_bytes maximum) to
// its terminal, exactly as BenchmarkCaptureVsScript's command
// (backend/capture): 100-byte lines with the terminal's onlcr turned off.
const benchProcessCommand = `stty -onlcr; yes 'The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs 0123456789abcd' | head -c 10000000`

// benchProcessChildEnv selects the child role of
// BenchmarkCaptureProcessVsScript in a re-executed test binary; its value
// is the JSON of a benchProcessJob.
const benchProcessChildEnv = "GATEHOUSE_BENCH_CAPTURE_PROCESS_CHILD"

type benchProcessJob struct {
	Env      map[string]string `json:"env"`
	Scenario string            `json:"scenario"`
}

// BenchmarkCaptureProcessVsScript compares `gatehouse capture-process`
// end to end — scenario parsing, the operator policy, the capture, the
// Evidence seal, the saved file and its index entry, the Evidence on
// stdout — of a command writing 10 MB to its terminal with
// `script -q -c CMD /dev/null` running the same command (docs/benchmarks.md:
// at most 3× the wall time). Both run as child processes, one of each per
// iteration: gatehouse is this test binary re-executed
// (TestCaptureProcessBenchChild runs the CLI's own entry point), with one
// data directory for every iteration, as a user's is, after one warm-up
// run that is not counted. It reports the mean wall and CPU time of each
// (CPU with the children: the renderer helper and the target), the wall
// ratio and the peak resident set of the largest process of each side
// (GNU time(1): for gatehouse usually the renderer helper's Node, whose
// resident set is mostly the node binary's shared pages).
func BenchmarkCaptureProcessVsScript(b *testing.B) {
	scriptPath, err := exec.LookPath("script")
	if err != nil {
		b.Skip("script(1) is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	env, scenario := benchProcessSetup(b)
	job, _ := json.Marshal(benchProcessJob{Env: env, Scenario: scenario})
	childEnv := benchProcessChildEnv + "=" + string(job)
	capture := func() (time.Duration, time.Duration, int64) {
		return runChildMeasured(b, childEnv, self, "-test.run=^TestCaptureProcessBenchChild$", "-test.count=1")
	}
	capture() // warm-up: creates the data directory and its database
	var tScript, tCapture, cpuScript, cpuCapture time.Duration
	var rssScript, rssCapture int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, cpu, rss := runChildMeasured(b, "", scriptPath, "-q", "-c", benchProcessCommand, "/dev/null")
		tScript, cpuScript, rssScript = tScript+d, cpuScript+cpu, max(rssScript, rss)
		d, cpu, rss = capture()
		tCapture, cpuCapture, rssCapture = tCapture+d, cpuCapture+cpu, max(rssCapture, rss)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tScript.Milliseconds())/n, "script-ms")
	b.ReportMetric(float64(tCapture.Milliseconds())/n, "capture-process-ms")
	b.ReportMetric(float64(tCapture)/float64(tScript), "ratio")
	b.ReportMetric(float64(cpuScript.Milliseconds())/n, "script-cpu-ms")
	b.ReportMetric(float64(cpuCapture.Milliseconds())/n, "capture-process-cpu-ms")
	b.ReportMetric(float64(rssScript)/1024, "script-maxrss-MB")
	b.ReportMetric(float64(rssCapture)/1024, "capture-process-maxrss-MB")
}

// runChildMeasured runs path with args (and env added to this process's
// environment when set), its output discarded, and returns its wall time,
// its CPU time with its waited-for descendants and its peak resident set
// in KiB (benchproc.Run).
func runChildMeasured(b *testing.B, env, path string, args ...string) (time.Duration, time.Duration, int64) {
	b.Helper()
	var extra []string
	if env != "" {
		extra = []string{env}
	}
	r, err := benchproc.Run(b.TempDir(), nil, extra, path, args...)
	if err != nil {
		b.Fatal(err)
	}
	return r.Wall, r.CPU, r.MaxRSSKiB
}

// TestCaptureProcessBenchChild is the gatehouse side of
// BenchmarkCaptureProcessVsScript; it only runs in the benchmark's child
// process.
func TestCaptureProcessBenchChild(t *testing.T) {
	raw := os.Getenv(benchProcessChildEnv)
	if raw == "" {
		t.Skip("runs only as the child of BenchmarkCaptureProcessVsScript")
	}
	var job benchProcessJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		t.Fatal(err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	var stderr strings.Builder
	io := IO{Stdin: strings.NewReader(""), Stdout: devnull, Stderr: &stderr, Getenv: func(k string) string {
		if v, ok := job.Env[k]; ok {
			return v
		}
		if k == "PATH" || k == "HOME" {
			return os.Getenv(k)
		}
		return ""
	}}
	if status := run(context.Background(), io, []string{"capture-process", job.Scenario}); status != 0 {
		t.Fatalf("capture-process: status %d: %s", status, stderr.String())
	}
}

// benchProcessSetup makes what a `capture-process` of benchProcessCommand
// needs: the environment of a fresh data directory with captures enabled
// for a temporary working directory, and the scenario file.
func benchProcessSetup(b *testing.B) (env map[string]string, scenario string) {
	b.Helper()
	work := b.TempDir()
	roots, _ := json.Marshal([]string{work})
	env = map[string]string{
		"GATEHOUSE_DATA_DIR":                  filepath.Join(b.TempDir(), "data"),
		policy.CaptureEnvEnabled:              "true",
		policy.CaptureEnvExecutableRoots:      `["/bin","/usr/bin"]`,
		policy.CaptureEnvWorkingRoots:         string(roots),
		policy.CaptureEnvAllowedEnv:           `["PATH"]`,
		policy.CaptureEnvAllowExternalNetwork: "true",
	}
	sc, _ := json.Marshal(map[string]any{"approved": true, "executable": "/bin/sh", "arguments": []any{"-c", benchProcessCommand},
		"working_directory": work, "environment": map[string]any{"PATH": "/usr/bin:/bin"},
		"limits": map[string]any{"output_bytes": 10_000_000, "frames": 100000}})
	scenario = filepath.Join(b.TempDir(), "scenario.json")
	if err := os.WriteFile(scenario, sc, 0o600); err != nil {
		b.Fatal(err)
	}
	return env, scenario
}

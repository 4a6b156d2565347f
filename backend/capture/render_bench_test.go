package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// benchChunk is the size of one write, about what a PTY read returns.
const benchChunk = 4096

// benchStream is about 4 MB of realistic mixed terminal output: the
// corpus's recorded programs (ls, grep, less, vim, top, tmux), a coloured
// build log, progress bars redrawn with CR, and UTF-8 text with accents,
// CJK and combining marks.
func benchStream(b testing.TB) []byte {
	var recorded [][]byte
	for _, c := range loadCorpus(b) {
		if c.File != "" {
			recorded = append(recorded, c.bytes(b))
		}
	}
	var out bytes.Buffer
	for i := 0; out.Len() < 4<<20; i++ {
		out.Write(recorded[i%len(recorded)])
		for j := range 40 {
			fmt.Fprintf(&out, "\x1b[32mok\x1b[0m  \x1b[1mgithub.com/example/pkg%d/sub%d\x1b[0m\t%d.%03ds  coverage: \x1b[33m%d.%d%%\x1b[0m of statements\r\n", i, j, j%3, (i*j)%1000, (i+j)%100, j%10)
		}
		for p := 0; p <= 100; p += 5 {
			fmt.Fprintf(&out, "\r\x1b[36m[%-40s]\x1b[0m %3d%% %s", strings.Repeat("#", p*40/100), p, "downloading")
		}
		out.WriteString("\r\n")
		for j := range 10 {
			fmt.Fprintf(&out, "résumé naïve café %d — 日本語のテキスト e\u0301 \x1b[38;5;%dmcolour\x1b[0m \x1b[38;2;%d;100;200mtrue\x1b[0m\r\n", j, (i+j)%256, (i*7+j)%256)
		}
	}
	return out.Bytes()
}

// renderOnce writes data to a fresh 80x24 screen in PTY-sized chunks,
// taking a rendered frame after each chunk when frames is set (as a
// capture does), else one at the end; the helper's start and end are
// included, as in a capture.
func renderOnce(b *testing.B, h RendererHelper, data []byte, frames bool) {
	s, err := startScreen(h, Terminal{Columns: 80, Rows: 24, Scrollback: 1000})
	if err != nil {
		b.Fatal(err)
	}
	if want := h.Snapshots != nil; s.fromSnapshot != want {
		b.Fatalf("the helper started from its snapshot: %v, want %v (%s)", s.fromSnapshot, want, h.Snapshots.Status())
	}
	renderRun(b, s, data, frames)
	s.close()
	if s.err != nil {
		b.Fatal(s.err)
	}
}

// renderRun is one run of the rendering path on screen s: data in
// PTY-sized chunks, a frame after each chunk when frames is set, and one
// at the end. As a capture does (framesAhead), it asks for up to
// framesAhead frames before it waits for the oldest, and decodes each.
func renderRun(b *testing.B, s *screen, data []byte, frames bool) {
	owed := 0
	take := func() {
		s.frameOf(s.next()) //nolint:errcheck // sticky: checked at the end
		owed--
	}
	for i := 0; i < len(data); i += benchChunk {
		s.write(data[i:min(i+benchChunk, len(data))])
		if frames {
			if owed == framesAhead {
				take()
			}
			s.requestFrame() //nolint:errcheck // sticky: checked at the end
			owed++
		}
	}
	for owed > 0 && s.err == nil {
		take()
	}
	if _, err := s.snapshot(); err != nil {
		b.Fatal(err)
	}
}

// xtermResult is what frontend/conformance/bench.mjs prints.
type xtermResult struct {
	Bytes    int     `json:"bytes"`
	MedianNS float64 `json:"median_ns"`
	MBPerS   float64 `json:"mb_per_s"`
}

// xtermRun runs @xterm/headless alone on the same bytes, size and
// chunking (frontend/conformance/bench.mjs); cold is one run in a fresh
// Node, else the median of 3 after a warm-up. wall is the process's wall
// time, from its start to its exit.
func xtermRun(b *testing.B, node, file string, size int, frames, cold bool) (res xtermResult, wall, cpu time.Duration) {
	mode, temp := "write", "warm"
	if frames {
		mode = "frames"
	}
	if cold {
		temp = "cold"
	}
	cmd := exec.Command(node, filepath.Join(frontendDir(), "conformance", "bench.mjs"), file, "80", "24", fmt.Sprint(benchChunk), "3", mode, temp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	wall = time.Since(start)
	if err != nil {
		b.Fatalf("bench.mjs: %v: %s", err, stderr.String())
	}
	cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatalf("bench.mjs output %q: %v", out, err)
	}
	if res.Bytes != size {
		b.Fatalf("bench.mjs wrote %d bytes, want %d", res.Bytes, size)
	}
	return res, wall, cpu
}

// cpuTime is the CPU time (user and system) of this process and of its
// children waited for so far.
func cpuTime(b *testing.B) time.Duration {
	var self, children syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		b.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children); err != nil {
		b.Fatal(err)
	}
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// median is the median of d (d is sorted in place).
func median(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Nanoseconds())
}

// BenchmarkRenderVsXterm measures the capture's rendering path (the
// helper process, its pipes and framing, the frames decoded in Go) on ~4 MB
// of mixed output and on 4 MB of plain lines (the "plain-" runs), next to
// @xterm/headless alone in one Node process on the same bytes, size and
// chunking (frontend/conformance/bench.mjs). "write" parses and reads one
// frame at the end; "write+frames" reads a frame (rows, cursor,
// serialized state) after every chunk, as a capture does, on both sides.
//
// A capture starts its helper, renders once and ends it, so go/xterm (the
// goal of docs/benchmarks.md: at most 1/0.9) compares that with the same
// on the other side: each iteration times one capture's rendering path,
// the helper's start and exit included (ns/op), then, right after on the
// same machine state, a fresh Node running @xterm/headless once, from its
// start to its exit (xterm-cold-ns/op); the ratio is of the medians. The
// warm ratio (go/xterm-warm) compares the steady state with Node's JIT
// compiler warm on both sides: one helper, one run not counted, then 3
// runs each on a fresh terminal ('n'), against bench.mjs's median of 3
// after a warm-up in one Node process (xterm-warm-ns/op). go/xterm-cpu is
// the cold ratio in CPU time (user and system, this process and the
// helper against the Node process), which a busy machine moves far less
// than wall time: it shows what the rendering path costs, the wall ratio
// what waiting for the other process adds.
//
// The helper starts as a capture's does: from its verified startup
// snapshot (RendererSnapshots), built before the timed runs as the app
// builds it when it starts; GATEHOUSE_BENCH_LOADER=1 measures the
// loader instead (no snapshot), which a capture uses only when no
// snapshot can be made.
func BenchmarkRenderVsXterm(b *testing.B) {
	node := requireNode(b)
	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer sup.Close()
	h := RendererHelper{Node: node, Supervisor: sup}
	if os.Getenv("GATEHOUSE_BENCH_LOADER") == "" {
		sum, err := fileSHA256(node)
		if err != nil {
			b.Fatal(err)
		}
		h.NodeSHA256, h.Snapshots = sum, NewRendererSnapshots(b.TempDir())
		if err := h.Snapshots.Prepare(h); err != nil {
			b.Fatal(err)
		}
	}
	mixed := benchStream(b)
	// plain is what the capture benchmark's command prints (100-byte
	// lines, no carriage returns), 4 MB of it: output that scrolls
	plain := bytes.Repeat([]byte(strings.SplitN(benchCommand, "'", 3)[1]+"\n"), 4<<20/100)
	for _, mode := range []struct {
		name   string
		data   []byte
		frames bool
	}{
		{"write", mixed, false}, {"write+frames", mixed, true},
		{"plain-write", plain, false}, {"plain-write+frames", plain, true},
	} {
		data := mode.data
		file := filepath.Join(b.TempDir(), "stream.bin")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			b.Fatal(err)
		}
		b.Run(mode.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var goCold, xtCold, goCPU, xtCPU []time.Duration
			for b.Loop() {
				cpu0 := cpuTime(b)
				start := time.Now()
				renderOnce(b, h, data, mode.frames)
				goCold = append(goCold, time.Since(start))
				b.StopTimer()
				goCPU = append(goCPU, cpuTime(b)-cpu0)
				_, wall, cpu := xtermRun(b, node, file, len(data), mode.frames, true)
				xtCold, xtCPU = append(xtCold, wall), append(xtCPU, cpu)
				b.StartTimer()
			}
			b.StopTimer()
			goWarm := warmRuns(b, h, data, mode.frames)
			xt, _, _ := xtermRun(b, node, file, len(data), mode.frames, false)
			b.ReportMetric(median(xtCold), "xterm-cold-ns/op")
			b.ReportMetric(median(goCold)/median(xtCold), "go/xterm")
			b.ReportMetric(median(goCPU)/median(xtCPU), "go/xterm-cpu")
			b.ReportMetric(goWarm, "go-warm-ns/op")
			b.ReportMetric(xt.MedianNS, "xterm-warm-ns/op")
			b.ReportMetric(goWarm/xt.MedianNS, "go/xterm-warm")
		})
	}
}

// warmRuns is the median time of 3 runs of the rendering path on one
// helper after a run not counted, each on a fresh terminal.
func warmRuns(b *testing.B, h RendererHelper, data []byte, frames bool) float64 {
	t := Terminal{Columns: 80, Rows: 24, Scrollback: 1000}
	s, err := startScreen(h, t)
	if err != nil {
		b.Fatal(err)
	}
	defer s.close()
	var times []time.Duration
	for i := range 4 {
		if err := s.reset(t); err != nil {
			b.Fatal(err)
		}
		if _, err := s.snapshot(); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		renderRun(b, s, data, frames)
		if i > 0 {
			times = append(times, time.Since(start))
		}
	}
	return median(times)
}

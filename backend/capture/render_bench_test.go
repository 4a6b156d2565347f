package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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
// capture does), else one at the end; the helper's start is included.
func renderOnce(b *testing.B, h RendererHelper, data []byte, frames bool) {
	s, err := startScreen(h, Terminal{Columns: 80, Rows: 24, Scrollback: 1000})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < len(data); i += benchChunk {
		s.write(data[i:min(i+benchChunk, len(data))])
		if frames {
			s.snapshot() //nolint:errcheck // checked at the end
		}
	}
	if _, err := s.snapshot(); err != nil {
		b.Fatal(err)
	}
	s.close()
}

// xtermTime times @xterm/headless on the same bytes
// (frontend/conformance/bench.mjs, median of 3 runs after a warm-up).
func xtermTime(b *testing.B, node, file string, size int, frames bool) (medianNS, mbPerS float64) {
	mode := "write"
	if frames {
		mode = "frames"
	}
	cmd := exec.Command(node, filepath.Join(frontendDir(), "conformance", "bench.mjs"), file, "80", "24", fmt.Sprint(benchChunk), "3", mode)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("bench.mjs: %v: %s", err, stderr.String())
	}
	var res struct {
		Bytes    int     `json:"bytes"`
		MedianNS float64 `json:"median_ns"`
		MBPerS   float64 `json:"mb_per_s"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		b.Fatalf("bench.mjs output %q: %v", out, err)
	}
	if res.Bytes != size {
		b.Fatalf("bench.mjs wrote %d bytes, want %d", res.Bytes, size)
	}
	return res.MedianNS, res.MBPerS
}

// BenchmarkRenderVsXterm measures the capture's rendering path (the
// helper process, its pipes and framing, the frames decoded in Go) on ~4 MB
// of mixed output and on 4 MB of plain lines (the "plain-" runs), next to
// @xterm/headless alone in one Node process on the same bytes, size and
// chunking (frontend/conformance/bench.mjs): xterm-ns/op and xterm-MB/s
// are Node's median, go/xterm the time ratio (at most 1/0.9 is the goal
// of docs/benchmarks.md). "write" parses and reads one frame at the end;
// "write+frames" reads a frame (rows, cursor, serialized state) after
// every chunk, as a capture does, on both sides.
func BenchmarkRenderVsXterm(b *testing.B) {
	node := requireNode(b)
	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer sup.Close()
	h := RendererHelper{Node: node, Supervisor: sup}
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
			for b.Loop() {
				renderOnce(b, h, data, mode.frames)
			}
			goNS := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			// Node runs right after, on the same machine state, so the
			// ratio holds even when the machine is busy.
			xtermNS, xtermMBs := xtermTime(b, node, file, len(data), mode.frames)
			b.ReportMetric(xtermNS, "xterm-ns/op")
			b.ReportMetric(xtermMBs, "xterm-MB/s")
			b.ReportMetric(goNS/xtermNS, "go/xterm")
		})
	}
}

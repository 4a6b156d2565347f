package runner

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

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
		snap, err := artifact.Capture(dir, ex.Manifest.Files)
		if err != nil {
			b.Fatal(err)
		}
		req.Snapshot = snap
		if r := testRunner.Run(context.Background(), req); r.Envelope.Status != StatusSucceeded {
			b.Fatalf("%+v", r.Envelope)
		}
	}
}

// BenchmarkBareNode is the baseline: `node script.mjs < input.json` with
// stdout read to the end, started and reaped directly.
func BenchmarkBareNode(b *testing.B) {
	dir := b.TempDir()
	script := filepath.Join("testdata", "scripts", "echo.mjs")
	abs, _ := filepath.Abs(script)
	input := filepath.Join(dir, "input.json")
	os.WriteFile(input, []byte(`{"n":1}`), 0o644)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
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
	}
}

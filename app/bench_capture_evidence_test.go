package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
	"github.com/gatehouse/gatehouse/backend/store"
)

// BenchmarkCaptureEvidence measures, in this process, everything
// `capture-process` does after Capture returns, on the record of one real
// capture of benchProcessCommand (10 MB written to the terminal): the
// record's encoding, the seal (evidence_id and envelope), the check of
// the sealed bytes for saving, the save (file, index, verification mark),
// and all of it together as captureAndSave runs it. Each step's CPU cost
// is its ns/op here; BenchmarkCaptureProcessVsScript has the end-to-end
// ratio.
func BenchmarkCaptureEvidence(b *testing.B) {
	rec, env := benchCapturedRecord(b)
	defer env.Close()
	encoded, err := rec.AppendJSON(nil, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("step=encode", func(b *testing.B) {
		b.SetBytes(int64(len(encoded)))
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := rec.AppendJSON(nil, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	seal := func() ([]byte, *evidence.Envelope, string) {
		ev, err := record.NewEnvelope(rec, bytes.TrimSuffix(encoded, []byte("\n")), Version)
		if err != nil {
			b.Fatal(err)
		}
		out, parsed, err := evidence.SealParsed(ev)
		if err != nil {
			b.Fatal(err)
		}
		return out, parsed, ev.EvidenceID
	}
	b.Run("step=seal", func(b *testing.B) {
		b.SetBytes(int64(len(encoded)))
		defer reportCPU(b)()
		for b.Loop() {
			seal()
		}
	})
	out, parsed, id := seal()
	b.Run("step=check", func(b *testing.B) {
		b.SetBytes(int64(len(out)))
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := library.CheckParsedForSave(out, parsed, id); err != nil {
				b.Fatal(err)
			}
		}
	})
	checked, err := library.CheckParsedForSave(out, parsed, id)
	if err != nil {
		b.Fatal(err)
	}
	entry := store.EvidenceEntry{PredicateType: parsed.PredicateType, Operation: parsed.Operation, Summary: json.RawMessage(`{}`)}
	b.Run("step=save", func(b *testing.B) {
		b.SetBytes(int64(len(out)))
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := env.lib().Save(context.Background(), entry, checked); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("step=all", func(b *testing.B) {
		b.SetBytes(int64(len(out)))
		defer reportCPU(b)()
		for b.Loop() {
			ev, ahead, err := captureEnvelope(rec)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := env.lib().SealAndSave(context.Background(), store.EvidenceEntry{PredicateType: ev.PredicateType,
				Operation: ev.Operation, Summary: json.RawMessage(`{}`)}, ev, ahead); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchCapturedRecord runs `capture-process` of benchProcessCommand once
// through the CLI and returns the record it saved (decoded from its
// Evidence on stdout, and checked to encode back to the same bytes) and
// the Env of its data directory.
func benchCapturedRecord(b *testing.B) (*capture.Record, *Env) {
	b.Helper()
	vars, scenario := benchProcessSetup(b)
	var stdout, stderr bytes.Buffer
	io := IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		if k == "PATH" || k == "HOME" {
			return os.Getenv(k)
		}
		return ""
	}}
	if status := run(context.Background(), io, []string{"capture-process", scenario}); status != 0 {
		b.Fatalf("capture-process: status %d: %s", status, stderr.String())
	}
	ev, issues := evidence.Parse(stdout.Bytes())
	if len(issues) > 0 {
		b.Fatal(evidence.IssueList(issues))
	}
	var rec capture.Record
	if err := json.Unmarshal(ev.NormalizedResult, &rec); err != nil {
		b.Fatal(err)
	}
	again, err := rec.AppendJSON(nil, false)
	if err != nil || !bytes.Equal(bytes.TrimSuffix(again, []byte("\n")), ev.NormalizedResult) {
		b.Fatalf("the decoded record does not encode back to its bytes (%v)", err)
	}
	env, err := openEnv(context.Background(), io)
	if err != nil {
		b.Fatal(err)
	}
	return &rec, env
}

// reportCPU starts measuring this process's CPU time (user and system,
// every thread: the garbage collector's work included) and returns the
// function that reports it per iteration as cpu-ms/op, which a loaded
// machine disturbs less than the wall time of ns/op.
func reportCPU(b *testing.B) func() {
	start := processCPU(b)
	return func() {
		b.ReportMetric(float64(processCPU(b)-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

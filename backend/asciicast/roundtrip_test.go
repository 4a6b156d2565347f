package asciicast

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/policy"
)

// realCapture runs /bin/sh -c script under a real PTY with the scenario
// events given and returns the verified record.
func realCapture(t *testing.T, script string, events []map[string]any) *capture.Record {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("process capture runs on Linux")
	}
	sup := th.Supervisor // the only one of this test process (main_test.go)
	doc, _ := json.Marshal(map[string]any{
		"approved": true, "executable": "/bin/sh", "arguments": []string{"-c", script},
		"working_directory": t.TempDir(), "environment": map[string]string{"PATH": "/usr/bin:/bin"},
		"terminal": map[string]any{"columns": 40, "rows": 8}, "events": events,
	})
	sc, issues := capture.ParseScenario(doc)
	if len(issues) > 0 {
		t.Fatalf("scenario: %v", issues)
	}
	pol := policy.DefaultCaptureSettings()
	pol.Enabled, pol.AllowExternalNetwork = true, true
	pol.ExecutableRoots, pol.WorkingRoots, pol.AllowedEnv = []string{"/"}, []string{"/"}, []string{"PATH"}
	rec, err := capture.Capture(context.Background(), sup, sc, capture.Options{
		Policy: pol, TempDir: t.TempDir(), GatehouseVersion: "test", ProviderVersion: "test", Node: th.Node,
		RunID: fmt.Sprintf("asciicast-test-%d-%d", os.Getpid(), time.Now().UnixNano()),
	})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(rec)
	if is := record.Verify(raw); len(is) > 0 {
		t.Fatalf("record: %v", is)
	}
	return rec
}

// TestRoundTripRealCapture captures a real program (colours, a resize, a
// sensitive input read with echo off), exports it as asciicast v2,
// imports that, and checks the terminal frames are the same: every raw
// frame (data and time) and every rendered frame (lines, cursor, size).
// The secret never appears in the export.
func TestRoundTripRealCapture(t *testing.T) {
	const secret = "hunter2-s3cret"
	script := `printf 'step 1\n'; sleep 0.2; printf '\033[31mstep 2 red\033[0m\n'; stty -echo; read x; stty echo; ` +
		`printf 'step 3 got %s bytes\n' "${#x}"; sleep 0.3; printf 'size %s\n' "$(stty size)"`
	rec := realCapture(t, script, []map[string]any{
		{"type": "input", "at_ms": 400, "data": secret + "\n", "sensitive": true},
		{"type": "resize", "at_ms": 500, "columns": 50, "rows": 10},
	})
	if rec.Exit.Code == nil || *rec.Exit.Code != 0 {
		t.Fatalf("exit %+v", rec.Exit)
	}
	cast, err := ExportCapture(rec)
	if err != nil {
		t.Fatal(err)
	}
	text := string(cast)
	if strings.Contains(text, secret) || strings.Contains(text, "hunter2") {
		t.Fatalf("the export contains the secret:\n%s", text)
	}
	if !strings.Contains(text, `"i", "<redacted-input:15-bytes>"]`) || !strings.Contains(text, `"r", "50x10"]`) ||
		!strings.HasPrefix(text, `{"version":2,"width":40,"height":8,`) || !strings.Contains(text, `"m", "checkpoint before"]`) {
		t.Fatalf("export:\n%s", text)
	}
	got, err := Import(th, cast, "capture.cast")
	if err != nil {
		t.Fatalf("import of the export: %v\n%s", err, text)
	}
	if len(got.Frames) != len(rec.Frames) || len(got.RenderedFrames) != len(rec.RenderedFrames) {
		t.Fatalf("frames %d/%d rendered %d/%d", len(got.Frames), len(rec.Frames), len(got.RenderedFrames), len(rec.RenderedFrames))
	}
	for i, f := range rec.Frames {
		if got.Frames[i] != f {
			t.Errorf("frame %d: %+v, want %+v", i, got.Frames[i], f)
		}
	}
	for i, f := range rec.RenderedFrames {
		g := got.RenderedFrames[i]
		if g.AtMS != f.AtMS || g.Columns != f.Columns || g.Rows != f.Rows || g.CursorX != f.CursorX || g.CursorY != f.CursorY ||
			strings.Join(g.Lines, "|") != strings.Join(f.Lines, "|") || g.SerializedState != f.SerializedState {
			t.Errorf("rendered frame %d:\n got %+v\nwant %+v", i, g, f)
		}
	}
	last := rec.RenderedFrames[len(rec.RenderedFrames)-1]
	if !strings.Contains(strings.Join(last.Lines, "\n"), "size 10 50") {
		t.Errorf("the resize did not reach the program: %q", last.Lines)
	}
	if len(got.InteractionEvents) != 2 || got.InteractionEvents[1].Type != capture.EventResize || got.InteractionEvents[1].Data != "50x10" {
		t.Errorf("interaction events %+v", got.InteractionEvents)
	}
	// The import is terminal-only and says so; its Evidence is sealed and
	// reads back.
	if got.Dimensions.Terminal != DimensionObserved || got.Dimensions.Process != DimensionUnknown || len(got.ResidualUnknowns) != 6 ||
		got.Origin.Kind != OriginKind || got.Origin.Version != 2 {
		t.Errorf("recording %+v / %+v", got.Dimensions, got.Origin)
	}
	env, out, err := Evidence(got)
	if err != nil {
		t.Fatal(err)
	}
	parsed, issues := evidence.Parse(out)
	if len(issues) > 0 || parsed.EvidenceID != env.EvidenceID || parsed.PredicateType != PredicateTerminalRecording ||
		parsed.Authority != evidence.AuthorityHistoricalReference {
		t.Fatalf("parse: %v %+v", issues, parsed)
	}
	back, err := ParseRecording(parsed.NormalizedResult)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ExportRecording(back)
	if err != nil {
		t.Fatal(err)
	}
	re, err := Import(th, again, "again.cast")
	if err != nil {
		t.Fatal(err)
	}
	for i := range re.Frames {
		if re.Frames[i] != got.Frames[i] {
			t.Fatalf("second round trip frame %d differs", i)
		}
	}
}

func TestExportOrdersByJournalAndMarksUndelivered(t *testing.T) {
	code := 0
	rec := &capture.Record{
		Manifest: capture.Manifest{StartedAt: "2026-01-02T03:04:05Z",
			Scenario: json.RawMessage(`{"terminal":{"columns":20,"rows":5,"scrollback":0},"events":[{"type":"input","at_ms":5,"data":"pw","sensitive":true},{"type":"input","at_ms":9,"data":"late","sensitive":false}]}`)},
		Frames: []capture.Frame{{Sequence: 0, AtMS: 10, Data: "a"}, {Sequence: 1, AtMS: 10, Data: "b"}},
		InteractionEvents: []capture.InteractionEvent{
			{Sequence: 0, ScheduledAtMS: 5, DispatchedAtMS: 10, Type: "input", Data: "pw", Outcome: "dispatched"}, // not yet a placeholder: must become one
			{Sequence: 1, ScheduledAtMS: 9, DispatchedAtMS: 20, Type: "input", Data: "late", Outcome: "target_exited"},
		},
		FilesystemCheckpoints: []capture.FilesystemCheckpoint{{Name: "before", AtMS: 0}},
		EventJournal: []capture.JournalEntry{{CaptureOrder: 0, Collection: "filesystem_checkpoints", Index: 0}, {CaptureOrder: 1, Collection: "frames", Index: 0},
			{CaptureOrder: 2, Collection: "interaction_events", Index: 0}, {CaptureOrder: 3, Collection: "frames", Index: 1}},
		Exit: capture.Exit{Code: &code, Reason: "exited"},
	}
	out, err := ExportCapture(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":2,"width":20,"height":5,"timestamp":1767323045,"title":"Gatehouse process capture","env":{"TERM":"xterm-256color"}}
[0.000, "m", "checkpoint before"]
[0.010, "o", "a"]
[0.010, "i", "<redacted-input:2-bytes>"]
[0.010, "o", "b"]
[0.020, "m", "input not delivered (target_exited)"]
`
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

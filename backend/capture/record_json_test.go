package capture

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pinnedRecord is a record with every field set, lists empty and nil,
// and text that encoding/json escapes in every way it does: HTML
// characters, U+2028 and U+2029, control characters, invalid UTF-8,
// characters outside the BMP, and raw JSON with spaces to compact.
func pinnedRecord() *Record {
	code, sig, sum, target := 3, "SIGTERM", strings.Repeat("ab", 32), "../t<a>"
	pg := 7
	fs := FileState{Path: "<filesystem-root-1>/a&b", Mode: 0o644, Size: 12, Type: "file", SHA256: &sum}
	link := FileState{Path: "<filesystem-root-1>/l", Mode: 0o777, Type: "symlink", SymlinkTarget: &target}
	return &Record{
		SchemaVersion: RecordSchemaVersion,
		Manifest: Manifest{
			GatehouseVersion: "1.2.3 <dev>", ProviderVersion: "p&q", Platform: "linux", Architecture: "amd64", PTYBackend: "creack/pty",
			StartedAt: "2026-12-01T21:00:00.000Z", CompletedAt: "2026-12-01T21:00:01.250Z",
			Scenario:           json.RawMessage(`{ "approved" : true, "executable":"/bin/sh", "x": "<&>\u2028" }`),
			ComparisonContract: json.RawMessage(`{"a": [1, 2.50, -0]}`), ShimPlan: json.RawMessage(`null`), ReplayPlan: json.RawMessage(" [ ] "),
			FullScenarioSHA256: sum, ComparisonContractSHA256: sum, ExecutableSHA256: sum, NormalizationSHA256: sum, ShimPlanSHA256: sum, ReplayPlanSHA256: sum,
		},
		Normalization: json.RawMessage(`{"pids":true,"patterns":[{"regex":"<\\d+>","replacement":"&"}]}`),
		Frames: []Frame{
			{Sequence: 0, AtMS: 0, Data: "plain\r\n"},
			{Sequence: 1, AtMS: 5, Data: "\x1b[31mred\x1b[0m <b>&amp;</b> \u2028\u2029 \x00\x07\x7f \xff\xfe bad utf-8 😀 é\t\"\\/"},
			{Sequence: 2, AtMS: 9, Data: ""},
		},
		RenderedFrames: []RenderedFrame{
			{Sequence: 0, AtMS: 0, Columns: 4, Rows: 2, CursorX: 4, CursorY: 1, ActiveBuffer: BufferNormal, Lines: []string{"ab<>", "😀  "}, SerializedState: "\x1b[?25l\x1b[1;1H<&>"},
			{Sequence: 1, AtMS: 9, Columns: 4, Rows: 2, ActiveBuffer: BufferAlternate, Lines: nil, SerializedState: ""},
		},
		InteractionEvents: []InteractionEvent{{Sequence: 0, ScheduledAtMS: 1, DispatchedAtMS: 2, Type: EventInput, Data: RedactedInput(3), Outcome: OutcomeDispatched}, {Sequence: 1, ScheduledAtMS: 4, DispatchedAtMS: 4, Type: EventResize, Data: "80x24", Outcome: OutcomeTargetExited}},
		Exit:              Exit{Code: &code, Signal: &sig, Reason: ExitReasonExited},
		Settlement:        Settlement{State: SettlementQuiesced, ElapsedMS: 51, CleanupOutcome: CleanupNotRequired},
		ProcessSamples:    []ProcessSample{{AtMS: 0, PID: 1, ParentPID: 0, Command: "/bin/sh -c 'a && b'", ProcessGroupID: &pg}},
		FilesystemCheckpoints: []FilesystemCheckpoint{
			{Name: "before", Files: []FileState{fs, link}, Effects: []FileEffect{}},
			{Name: "after_settlement", AtMS: 60, Files: nil, Effects: []FileEffect{{Path: fs.Path, Status: "modified", Before: &fs, After: &link}}, Truncated: true},
		},
		ShimEvents:        []json.RawMessage{json.RawMessage(`{"a": "<x>"}`), json.RawMessage(`[1,  2]`)},
		ProtocolEvents:    []json.RawMessage{},
		ReplayTransitions: nil,
		ReactiveRun:       nil,
		EventJournal:      []JournalEntry{{CaptureOrder: 0, Collection: "frames", Index: 0}, {CaptureOrder: 1, Collection: "exit", Index: 0}},
		FilesBefore:       []FileState{fs},
		FilesAfter:        []FileState{},
		FilesystemEffects: nil,
		Truncated:         true,
		Limitations:       []string{"a <limit> & more", "é😀\u2028"},
		ResidualUnknowns:  []ResidualUnknown{{Scope: "process", Reason: "why <not>"}},
		Cleanup:           Cleanup{OwnedProcessGroup: OwnedProcessGroupVerified, TemporaryRoot: TemporaryRootRemoved},
	}
}

// encoded is v as a json.Encoder with SetEscapeHTML(escapeHTML) writes it.
func encoded(t *testing.T, v any, escapeHTML bool) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRecordEncodingIsPinned pins the bytes of pinnedRecord's JSON as
// encoding/json writes it (the form Evidence embeds): a change of the
// record's encoding, by whatever encoder, changes these digests.
func TestRecordEncodingIsPinned(t *testing.T) {
	for _, c := range []struct {
		escapeHTML bool
		golden     string
	}{{false, "record-pinned.json"}, {true, "record-pinned-escaped.json"}} {
		got := encoded(t, pinnedRecord(), c.escapeHTML)
		path := filepath.Join("testdata", c.golden)
		if os.Getenv("GATEHOUSE_UPDATE_GOLDEN") != "" {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("escapeHTML %v: the record's JSON changed:\n got %s\nwant %s", c.escapeHTML, got, want)
		}
		sum := sha256.Sum256(got)
		t.Logf("escapeHTML %v: %d bytes, sha256 %s", c.escapeHTML, len(got), hex.EncodeToString(sum[:]))
		var w bytes.Buffer
		if err := pinnedRecord().WriteJSON(&w, c.escapeHTML); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.Bytes(), want) {
			t.Errorf("escapeHTML %v: WriteJSON differs from the pinned bytes:\n got %s\nwant %s", c.escapeHTML, w.Bytes(), want)
		}
	}
}

// TestWriteJSONIsEncode checks WriteJSON and AppendJSON against json.Encoder on records
// of real captures (escape sequences, resizes, secrets, a large output)
// and on the records Capture starts from.
func TestWriteJSONIsEncode(t *testing.T) {
	recs := map[string]*Record{"new": newRecord(&Scenario{}, Options{}, Commitments{}, ""), "zero": {}, "pinned": pinnedRecord()}
	sc, opts := shScenario(t, `printf 'a\033[31mb<&>\342\200\250\n'; printf '\377\376 x'; seq 1 3000`, func(m obj) {
		m["events"] = []any{obj{"at_ms": 0, "type": "resize", "columns": 40, "rows": 10}}
	})
	recs["capture"] = capture(t, sc, opts)
	// frames of several pieces (record/json.go's text encodes 64 KiB at
	// once: textPiece), their cuts falling in and around multi-byte,
	// invalid and escaped characters
	const textPiece = 64 << 10
	large := pinnedRecord()
	parts := []string{"a", "é", "😀", "\xff", "\xe2\x80", "\xe2\x80\xa8", "<", "&", "\u2028", "\x1b[0m", "\n", "\"", "\x00", "\xf0\x9f"}
	rng := rand.New(rand.NewPCG(16, 1))
	for i := 0; i < 6; i++ {
		var b strings.Builder
		for b.Len() < (i+1)*textPiece/2+i {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		large.Frames = append(large.Frames, Frame{Sequence: len(large.Frames), AtMS: 10 + i, Data: b.String()})
	}
	recs["large"] = large
	for name, rec := range recs {
		for _, esc := range []bool{false, true} {
			want := encoded(t, rec, esc)
			var got bytes.Buffer
			if err := rec.WriteJSON(&got, esc); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s (escapeHTML %v): WriteJSON differs from json.Encoder:\n got %.400s\nwant %.400s", name, esc, got.Bytes(), want)
			}
			appended, err := rec.AppendJSON([]byte("x"), esc)
			if err != nil || !bytes.Equal(appended, append([]byte("x"), want...)) {
				t.Errorf("%s (escapeHTML %v): AppendJSON differs from json.Encoder (%v):\n got %.400s\nwant x%.400s", name, esc, err, appended, want)
			}
		}
	}
}

// TestWriteJSONReportsErrors: a field encoding/json refuses (raw JSON
// that is not JSON) and a failing writer are errors, not a short record.
func TestWriteJSONReportsErrors(t *testing.T) {
	rec := pinnedRecord()
	rec.ReactiveRun = json.RawMessage(`{"a":`)
	if err := rec.WriteJSON(&bytes.Buffer{}, false); err == nil || !strings.Contains(err.Error(), "reactive") && !strings.Contains(err.Error(), "encode") {
		t.Errorf("invalid raw JSON: %v", err)
	}
	if _, err := json.Marshal(rec); err == nil {
		t.Error("json.Marshal accepted the invalid raw JSON too; the test does not test anything")
	}
	if err := pinnedRecord().WriteJSON(failingWriter{}, false); !errors.Is(err, errWriteFailed) {
		t.Errorf("failing writer: %v", err)
	}
}

var errWriteFailed = errors.New("write failed")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWriteFailed }

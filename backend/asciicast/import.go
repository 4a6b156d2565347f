package asciicast

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/evidence"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// maxNameBytes bounds the file name recorded with an import.
const maxNameBytes = 255

// Import reads the asciicast v1, v2 or v3 file data, named name (a label such
// as "demo.cast", 1–255 bytes, no control characters), into a Recording,
// its screens rendered by xterm.js in the renderer helper h says how to
// run (capture.NewRenderer), as a capture's are.
// It fails with an *Error listing every problem (each with its line and
// path) and returns nothing partial. See the package documentation for
// the limits.
func Import(h capture.RendererHelper, data []byte, name string) (*Recording, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	c, list := parse(data)
	if len(list) > 0 {
		return nil, &Error{Issues: list}
	}
	sum := sha256.Sum256(data)
	rec := &Recording{
		SchemaVersion: RecordingSchemaVersion,
		Origin: Origin{Kind: OriginKind, Label: OriginLabel, Format: "asciicast", Version: c.version,
			FileName: name, FileSHA256: hex.EncodeToString(sum[:]), FileBytes: len(data),
			Title: c.title, Command: c.command, Timestamp: c.timestamp, IdleTimeLimit: c.idle, TermType: c.termType},
		Terminal:          c.size,
		Frames:            []capture.Frame{},
		RenderedFrames:    []capture.RenderedFrame{},
		InteractionEvents: []capture.InteractionEvent{},
		Markers:           []Marker{},
		Dimensions: Dimensions{Terminal: DimensionObserved, Interaction: DimensionUnknown, Exit: DimensionUnknown,
			Filesystem: DimensionUnknown, Protocol: DimensionUnknown, Process: DimensionUnknown, Shim: DimensionUnknown},
		ResidualUnknowns: []capture.ResidualUnknown{},
		Limitations: []string{
			fmt.Sprintf("Imported from the asciicast v%d file %q (sha256 %s): a terminal recording made outside Gatehouse, not Process Capture Evidence.", c.version, name, hex.EncodeToString(sum[:])),
			"Only the terminal was recorded; interaction, exit, filesystem, protocol, process and shim are unknown.",
			"Rendered frames were rebuilt by xterm.js (the viewer's terminal engine, as for captures) from the recorded output; the original terminal may have drawn them differently.",
		},
	}
	rec.Limitations = append(rec.Limitations, c.tolerated.limitations()...)
	for _, u := range unknownDimensions {
		rec.ResidualUnknowns = append(rec.ResidualUnknowns, capture.ResidualUnknown{Scope: u.scope, Reason: u.reason})
	}
	if err := rec.render(h, c.events); err != nil {
		return nil, err
	}
	return rec, nil
}

func checkName(name string) error {
	bad := name == "" || len(name) > maxNameBytes || !utf8.ValidString(name)
	for _, r := range name {
		bad = bad || unicode.IsControl(r)
	}
	if bad {
		return &Error{Issues: []Issue{{Line: 0, Issue: strictjson.Issue{Path: "$.name", Code: CodeInvalidValue, Message: fmt.Sprintf("the file name must be 1–%d bytes of UTF-8 without control characters", maxNameBytes)}}}}
	}
	return nil
}

// render turns the events into frames, rebuilding a rendered frame after
// each "o" and "r" event as Capture does. When those screens would exceed
// MaxRenderedBytes, it keeps only every k-th one (k = 2, 4, 8, …, the
// smallest that fits; the last one always): the raw frames stay complete
// and a viewer rebuilds the screens in between from them, and a
// limitation says so.
func (rec *Recording) render(h capture.RendererHelper, events []event) error {
	screens := 0
	for _, ev := range events {
		if ev.code == "o" || ev.code == "r" {
			screens++
		}
	}
	for stride := 1; ; stride *= 2 {
		fits, err := rec.renderEvery(h, events, stride, screens)
		if err != nil {
			return err
		}
		if fits {
			if stride > 1 {
				rec.Limitations = append(rec.Limitations, fmt.Sprintf(
					"Rendered frames were kept after every %d%s output or resize event (%d of %d) to stay within %d bytes of screens; the raw frames are complete, so replay is exact.",
					stride, ordinalSuffix(stride), len(rec.RenderedFrames), screens, MaxRenderedBytes))
			}
			return nil
		}
		if stride > screens { // not even the last screen fits (cannot happen within 1000×1000)
			return &Error{Issues: []Issue{{Line: 0, Issue: strictjson.Issue{Path: "$", Code: CodeRenderedTooLarge, Message: fmt.Sprintf("a single rebuilt screen exceeds %d bytes", MaxRenderedBytes)}}}}
		}
	}
}

func ordinalSuffix(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return "th"
	case n%10 == 1:
		return "st"
	case n%10 == 2:
		return "nd"
	case n%10 == 3:
		return "rd"
	}
	return "th"
}

// renderEvery builds the frames keeping the screen after every stride-th
// "o"/"r" event (and the last); it reports false, with rec's frame lists
// reset, as soon as the kept screens exceed MaxRenderedBytes, and an
// error naming the event's line when the terminal emulator failed on it.
func (rec *Recording) renderEvery(h capture.RendererHelper, events []event, stride, screens int) (bool, error) {
	rec.Frames, rec.RenderedFrames = rec.Frames[:0], rec.RenderedFrames[:0]
	rec.InteractionEvents, rec.Markers = rec.InteractionEvents[:0], rec.Markers[:0]
	r, err := capture.NewRenderer(h, capture.Terminal{Columns: rec.Terminal.Columns, Rows: rec.Terminal.Rows, Scrollback: 1000})
	if err != nil {
		return false, &Error{Issues: []Issue{{Line: 0, Issue: strictjson.Issue{Path: "$", Code: CodeUnrenderable, Message: err.Error() + "; nothing was imported"}}}}
	}
	defer r.Close()
	renderedBytes, seen := 0, 0
	snapshot := func(ev event) bool {
		seen++
		if seen%stride != 0 && seen != screens {
			return true
		}
		f, err := r.Snapshot()
		if err != nil {
			return true // reported by the next Write or Resize, or at the end
		}
		size := len(f.SerializedState)
		for _, l := range f.Lines {
			size += len(l)
		}
		renderedBytes += size
		if renderedBytes > MaxRenderedBytes {
			return false
		}
		f.Sequence, f.AtMS = len(rec.RenderedFrames), ev.ms
		rec.RenderedFrames = append(rec.RenderedFrames, f)
		return true
	}
	for _, ev := range events {
		switch ev.code {
		case "o":
			rec.Frames = append(rec.Frames, capture.Frame{Sequence: len(rec.Frames), AtMS: ev.ms, Data: ev.data})
			if err := r.Write([]byte(ev.data)); err != nil {
				return false, unrenderable(ev, err)
			}
			if !snapshot(ev) {
				return false, nil
			}
		case "r":
			rec.interaction(ev, capture.EventResize, fmt.Sprintf("%dx%d", ev.size.Columns, ev.size.Rows))
			if err := r.Resize(ev.size.Columns, ev.size.Rows); err != nil {
				return false, unrenderable(ev, err)
			}
			if !snapshot(ev) {
				return false, nil
			}
		case "i":
			rec.interaction(ev, capture.EventInput, ev.data)
		case "m":
			rec.Markers = append(rec.Markers, Marker{Sequence: len(rec.Markers), AtMS: ev.ms, Label: ev.data})
		case "x":
			st, _ := parseStatus(ev.data)
			rec.Origin.ExitStatus = &st
		}
	}
	if _, err := r.Snapshot(); err != nil && len(events) > 0 {
		return false, unrenderable(events[len(events)-1], err)
	}
	return true, nil
}

// unrenderable is the import error for an event the terminal emulator
// failed on.
func unrenderable(ev event, err error) error {
	return &Error{Issues: []Issue{{Line: ev.line, Issue: strictjson.Issue{Path: "$", Code: CodeUnrenderable, Message: err.Error() + "; this recording cannot be imported"}}}}
}

func (rec *Recording) interaction(ev event, typ, data string) {
	rec.InteractionEvents = append(rec.InteractionEvents, capture.InteractionEvent{
		Sequence: len(rec.InteractionEvents), ScheduledAtMS: ev.ms, DispatchedAtMS: ev.ms,
		Type: typ, Data: data, Outcome: capture.OutcomeDispatched,
	})
}

// Evidence seals rec as Evidence v2 and returns it with its JSON: subject
// the asciicast file (name, sha256, format "asciicast-v2"/"asciicast-v3",
// architecture "any"), provider ProviderID, predicate
// PredicateTerminalRecording, operation OperationImport, confidence
// derived (transcribed deterministically from the file), authority
// historical-reference (an earlier record made outside Gatehouse), no
// environment, and rec's limitations. The JSON is refused when it would be
// larger than evidence.MaxEnvelopeBytes, which no reader would accept.
func Evidence(rec *Recording) (*evidence.Envelope, []byte, error) {
	norm, err := marshalPlain(rec)
	if err != nil {
		return nil, nil, fmt.Errorf("asciicast: encode the recording: %w", err)
	}
	params, err := json.Marshal(map[string]any{"format": rec.Origin.Format, "version": rec.Origin.Version, "file_name": rec.Origin.FileName})
	if err != nil {
		return nil, nil, fmt.Errorf("asciicast: encode the parameters: %w", err)
	}
	e := &evidence.Envelope{
		Subject: &evidence.Subject{Name: rec.Origin.FileName, Digest: evidence.SubjectDigest{SHA256: rec.Origin.FileSHA256},
			Format: fmt.Sprintf("asciicast-v%d", rec.Origin.Version), Architecture: "any"},
		Provider:         evidence.Provider{ID: ProviderID, Name: ProviderName, Version: ProviderVersion},
		PredicateType:    PredicateTerminalRecording,
		Operation:        OperationImport,
		Parameters:       params,
		NormalizedResult: norm,
		Confidence:       evidence.Derived,
		Authority:        evidence.AuthorityHistoricalReference,
		Limitations:      append([]string{}, rec.Limitations...),
	}
	if err := evidence.Seal(e); err != nil {
		return nil, nil, fmt.Errorf("asciicast: seal the recording: %w", err)
	}
	out, err := marshalPlain(e)
	if err != nil {
		return nil, nil, fmt.Errorf("asciicast: encode the Evidence: %w", err)
	}
	if len(out) > evidence.MaxEnvelopeBytes {
		return nil, nil, &Error{Issues: []Issue{{Line: 0, Issue: strictjson.Issue{Path: "$", Code: CodeRenderedTooLarge, Message: fmt.Sprintf("the imported recording would be %d bytes of Evidence; above %d bytes no reader accepts it", len(out), evidence.MaxEnvelopeBytes)}}}}
	}
	return e, out, nil
}

// marshalPlain is compact JSON without HTML escaping, so placeholders such
// as "<redacted-input:4-bytes>" stay readable.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// ParseRecording strictly reads the normalized_result of imported
// recording Evidence back into a Recording (unknown members are an
// error). It checks the invariants Import guarantees: schema_version 1,
// origin kind, sequences 0, 1, 2, … with non-decreasing times, and every
// non-terminal dimension unknown.
func ParseRecording(raw json.RawMessage) (*Recording, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var rec Recording
	if err := dec.Decode(&rec); err != nil {
		return nil, &Error{Issues: []Issue{{Issue: strictjson.Issue{Path: "$.normalized_result", Code: CodeInvalidJSON, Message: err.Error()}}}}
	}
	var list issues
	if rec.SchemaVersion != RecordingSchemaVersion {
		list.add(0, "$.normalized_result.schema_version", CodeUnsupported, "schema_version must be %d", RecordingSchemaVersion)
	}
	if rec.Origin.Kind != OriginKind {
		list.add(0, "$.normalized_result.origin.kind", CodeInvalidValue, "origin.kind must be %q", OriginKind)
	}
	d := rec.Dimensions
	if d.Terminal != DimensionObserved || d.Interaction != DimensionUnknown || d.Exit != DimensionUnknown || d.Filesystem != DimensionUnknown ||
		d.Protocol != DimensionUnknown || d.Process != DimensionUnknown || d.Shim != DimensionUnknown {
		list.add(0, "$.normalized_result.dimensions", CodeInvalidValue, "an imported recording observes the terminal only; every other dimension is unknown")
	}
	if rec.Terminal.Columns < 1 || rec.Terminal.Rows < 1 || rec.Terminal.Columns > MaxTerminalSize || rec.Terminal.Rows > MaxTerminalSize {
		list.add(0, "$.normalized_result.terminal", CodeInvalidValue, "columns and rows must be 1–%d", MaxTerminalSize)
	}
	prev := 0
	for i, f := range rec.Frames {
		if f.Sequence != i || f.AtMS < prev {
			list.add(0, fmt.Sprintf("$.normalized_result.frames[%d]", i), CodeTimeOrder, "sequences run 0, 1, 2, … with non-decreasing at_ms")
		}
		prev = f.AtMS
	}
	prev = 0
	for i, f := range rec.RenderedFrames {
		if f.Sequence != i || f.AtMS < prev {
			list.add(0, fmt.Sprintf("$.normalized_result.rendered_frames[%d]", i), CodeTimeOrder, "sequences run 0, 1, 2, … with non-decreasing at_ms")
		}
		prev = f.AtMS
	}
	if len(list.list) > 0 {
		return nil, &Error{Issues: list.list}
	}
	return &rec, nil
}

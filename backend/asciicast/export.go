package asciicast

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture"
)

// redactedInput matches capture.RedactedInput placeholders: the only form
// in which a capture keeps sensitive input.
var redactedInput = regexp.MustCompile(`^<redacted-input:[0-9]+-bytes>$`)

// v2Header is the header line Export writes (members in this order).
type v2Header struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp *int64            `json:"timestamp,omitempty"`
	Title     string            `json:"title,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

// scenarioEvent is what Export reads of a scenario event.
type scenarioEvent struct {
	Type      string `json:"type"`
	Sensitive bool   `json:"sensitive"`
}

// outEvent is one event to write, ordered by (ms, order).
type outEvent struct {
	ms    int
	order int
	code  string
	data  string
}

// ExportCapture writes a Process Capture v4 record as asciicast v2: the
// scenario's initial terminal size and the capture's start time in the
// header; every raw frame as "o" at its at_ms; each dispatched input as
// "i" at its dispatched_at_ms (sensitive input appears only as the
// capture's "<redacted-input:N-bytes>" placeholder — any input not in that
// form of a scenario event marked sensitive is replaced by one); each
// dispatched resize as "r"; signals, stdin closes, undelivered events and
// filesystem checkpoints as "m" markers. Events at the same millisecond
// keep the capture's event_journal order. rec should have passed
// record.Verify.
func ExportCapture(rec *capture.Record) ([]byte, error) {
	var sc struct {
		Terminal capture.Terminal `json:"terminal"`
		Events   []scenarioEvent  `json:"events"`
	}
	if err := json.Unmarshal(rec.Manifest.Scenario, &sc); err != nil {
		return nil, fmt.Errorf("asciicast: export: the manifest scenario is unreadable: %w", err)
	}
	if sc.Terminal.Columns < 1 || sc.Terminal.Rows < 1 {
		return nil, fmt.Errorf("asciicast: export: the manifest scenario has no terminal size")
	}
	anySensitive := slices.ContainsFunc(sc.Events, func(e scenarioEvent) bool {
		return e.Type == capture.EventInput && e.Sensitive
	})
	order := journalOrder(rec)
	var evs []outEvent
	for i, f := range rec.Frames {
		evs = append(evs, outEvent{f.AtMS, order("frames", i), "o", f.Data})
	}
	for i, e := range rec.InteractionEvents {
		o := order("interaction_events", i)
		if e.Outcome != capture.OutcomeDispatched {
			evs = append(evs, outEvent{e.DispatchedAtMS, o, "m", fmt.Sprintf("%s not delivered (%s)", e.Type, e.Outcome)})
			continue
		}
		switch e.Type {
		case capture.EventInput:
			data := e.Data
			if anySensitive && !redactedInput.MatchString(data) && sensitiveAt(rec, sc.Events, i) {
				data = capture.RedactedInput(len(data))
			}
			evs = append(evs, outEvent{e.DispatchedAtMS, o, "i", data})
		case capture.EventResize:
			evs = append(evs, outEvent{e.DispatchedAtMS, o, "r", e.Data})
		case capture.EventSignal:
			evs = append(evs, outEvent{e.DispatchedAtMS, o, "m", "signal " + e.Data})
		default:
			evs = append(evs, outEvent{e.DispatchedAtMS, o, "m", e.Type})
		}
	}
	for i, c := range rec.FilesystemCheckpoints {
		evs = append(evs, outEvent{c.AtMS, order("filesystem_checkpoints", i), "m", "checkpoint " + c.Name})
	}
	h := v2Header{Version: 2, Width: sc.Terminal.Columns, Height: sc.Terminal.Rows,
		Title: "Gatehouse process capture", Env: map[string]string{"TERM": "xterm-256color"}}
	if t, err := time.Parse(time.RFC3339Nano, rec.Manifest.StartedAt); err == nil {
		ts := t.Unix()
		h.Timestamp = &ts
	}
	return write(h, evs)
}

// sensitiveAt reports whether interaction event i answers a scenario input
// event marked sensitive. Scenario events are dispatched in order, so the
// k-th input interaction event is the k-th scenario input event.
func sensitiveAt(rec *capture.Record, events []scenarioEvent, i int) bool {
	k := 0
	for j := 0; j < i; j++ {
		if rec.InteractionEvents[j].Type == capture.EventInput {
			k++
		}
	}
	for _, e := range events {
		if e.Type != capture.EventInput {
			continue
		}
		if k == 0 {
			return e.Sensitive
		}
		k--
	}
	return true // not a scenario event (a reactive action): keep it redacted
}

// journalOrder returns the capture order of an observation, from the
// event_journal when it has one (else the collection's index, after the
// journal's entries).
func journalOrder(rec *capture.Record) func(collection string, index int) int {
	pos := map[[2]any]int{}
	for _, j := range rec.EventJournal {
		pos[[2]any{j.Collection, j.Index}] = j.CaptureOrder
	}
	return func(collection string, index int) int {
		if o, ok := pos[[2]any{collection, index}]; ok {
			return o
		}
		return len(rec.EventJournal) + index
	}
}

// ExportRecording writes an imported Recording back as asciicast v2: its
// frames as "o", interaction events as "i"/"r", markers as "m" (a v3 exit
// status, which v2 cannot express, is dropped).
func ExportRecording(rec *Recording) ([]byte, error) {
	var evs []outEvent
	n := 0
	for _, f := range rec.Frames {
		evs = append(evs, outEvent{f.AtMS, n, "o", f.Data})
		n++
	}
	for _, e := range rec.InteractionEvents {
		code := "i"
		if e.Type == capture.EventResize {
			code = "r"
		}
		evs = append(evs, outEvent{e.DispatchedAtMS, n, code, e.Data})
		n++
	}
	for _, m := range rec.Markers {
		evs = append(evs, outEvent{m.AtMS, n, "m", m.Label})
		n++
	}
	h := v2Header{Version: 2, Width: rec.Terminal.Columns, Height: rec.Terminal.Rows, Timestamp: rec.Origin.Timestamp}
	if rec.Origin.Title != nil {
		h.Title = *rec.Origin.Title
	}
	return write(h, evs)
}

// write encodes the header and the events, sorted by time (stable, then
// by order), one JSON value per line.
func write(h v2Header, evs []outEvent) ([]byte, error) {
	slices.SortStableFunc(evs, func(a, b outEvent) int {
		if a.ms != b.ms {
			return a.ms - b.ms
		}
		return a.order - b.order
	})
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return nil, fmt.Errorf("asciicast: export: %w", err)
	}
	for _, e := range evs {
		b.WriteByte('[')
		b.WriteString(strconv.FormatFloat(float64(e.ms)/1000, 'f', 3, 64))
		b.WriteString(`, "`)
		b.WriteString(e.code)
		b.WriteString(`", `)
		if err := enc.Encode(e.data); err != nil { // ends with a newline
			return nil, fmt.Errorf("asciicast: export: %w", err)
		}
		b.Truncate(b.Len() - 1)
		b.WriteString("]\n")
	}
	return b.Bytes(), nil
}

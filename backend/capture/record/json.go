package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// WriteJSON writes r's JSON to w: exactly the bytes a json.Encoder with
// SetEscapeHTML(escapeHTML) writes for r, its final newline included.
//
// encoding/json builds a value's whole encoding in one buffer before it
// writes it; for a record holding 10 MB of raw output that buffer (grown
// by doubling) and the caller's copy of it raise the capturing process's
// peak memory by several times the output. WriteJSON instead encodes the
// record one field, and the raw and rendered frames one element, at a
// time with encoding/json itself (a raw frame's data in pieces, see
// text), so each piece is what the one-buffer encoding holds at that
// place and only a small piece's encoding is in memory at once. TestWriteJSONIsEncode keeps the two byte-identical.
func (r *Record) WriteJSON(w io.Writer, escapeHTML bool) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	e := recordWriter{w: bw, escapeHTML: escapeHTML}
	e.enc = json.NewEncoder(&e.buf)
	e.enc.SetEscapeHTML(escapeHTML)
	bw.WriteByte('{') //nolint:errcheck // bufio keeps the first error; Flush returns it
	e.field("schema_version", r.SchemaVersion)
	e.field("manifest", r.Manifest)
	e.field("normalization", r.Normalization)
	e.key("frames")
	e.frames(r.Frames)
	e.key("rendered_frames")
	writeList(&e, r.RenderedFrames)
	e.field("interaction_events", r.InteractionEvents)
	e.field("exit", r.Exit)
	e.field("settlement", r.Settlement)
	e.field("process_samples", r.ProcessSamples)
	e.field("filesystem_checkpoints", r.FilesystemCheckpoints)
	e.field("shim_events", r.ShimEvents)
	e.field("protocol_events", r.ProtocolEvents)
	e.field("replay_transitions", r.ReplayTransitions)
	e.field("reactive_run", r.ReactiveRun)
	e.field("event_journal", r.EventJournal)
	e.field("files_before", r.FilesBefore)
	e.field("files_after", r.FilesAfter)
	e.field("filesystem_effects", r.FilesystemEffects)
	e.field("truncated", r.Truncated)
	e.field("limitations", r.Limitations)
	e.field("residual_unknowns", r.ResidualUnknowns)
	e.field("cleanup", r.Cleanup)
	bw.WriteString("}\n") //nolint:errcheck // see above
	if e.err != nil {
		return fmt.Errorf("capture: encode the record: %w", e.err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("capture: write the record: %w", err)
	}
	return nil
}

// recordWriter is WriteJSON's state: the output, a reusable buffer with
// the encoder that writes into it, and the first encoding error.
type recordWriter struct {
	w          *bufio.Writer
	buf        bytes.Buffer
	enc        *json.Encoder
	err        error
	comma      bool
	escapeHTML bool
}

// key writes the separator before a field and its name (every name is
// plain ASCII, which encoding/json writes as it is).
func (e *recordWriter) key(name string) {
	if e.comma {
		e.w.WriteByte(',') //nolint:errcheck // bufio keeps the first error
	}
	e.comma = true
	e.w.WriteString(`"` + name + `":`) //nolint:errcheck // see above
}

// value writes v's encoding (without the encoder's newline).
func (e *recordWriter) value(v any) {
	if e.err != nil {
		return
	}
	e.buf.Reset()
	if err := e.enc.Encode(v); err != nil {
		e.err = err
		return
	}
	e.w.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte{'\n'})) //nolint:errcheck // see key
	if e.buf.Cap() > 1<<20 {                                 // do not keep one large frame's buffer
		e.buf = bytes.Buffer{}
	}
}

func (e *recordWriter) field(name string, v any) {
	e.key(name)
	e.value(v)
}

// frames writes the raw frames as encoding/json writes them, each
// frame's data in pieces (text).
func (e *recordWriter) frames(list []Frame) {
	if list == nil {
		e.w.WriteString("null") //nolint:errcheck // see key
		return
	}
	e.w.WriteByte('[') //nolint:errcheck // see key
	for i := range list {
		if i > 0 {
			e.w.WriteByte(',') //nolint:errcheck // see key
		}
		f := &list[i]
		e.w.WriteString(`{"sequence":` + strconv.Itoa(f.Sequence) + `,"at_ms":` + strconv.Itoa(f.AtMS) + `,"data":`) //nolint:errcheck // see key
		e.text(f.Data)
		e.w.WriteByte('}') //nolint:errcheck // see key
	}
	e.w.WriteByte(']') //nolint:errcheck // see key
}

// textPiece is how much of a string text encodes at once.
const textPiece = 64 << 10

// text writes s as encoding/json writes a string, encoding it in pieces
// of about textPiece bytes with encoding/json itself, so a frame of
// megabytes needs no buffer of its size. Each piece ends before a byte
// that starts a UTF-8 sequence: encoding/json reads a valid sequence
// whole and every byte of an invalid one alone, so no sequence it reads
// spans two pieces, and the pieces' encodings (without their quotes)
// join into the encoding of s.
func (e *recordWriter) text(s string) {
	if !e.escapeHTML {
		e.plainText(s)
		return
	}
	e.w.WriteByte('"') //nolint:errcheck // see key
	for len(s) > 0 && e.err == nil {
		n := min(len(s), textPiece)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		e.buf.Reset()
		if err := e.enc.Encode(s[:n]); err != nil {
			e.err = err
			return
		}
		b := bytes.TrimSuffix(e.buf.Bytes(), []byte{'\n'})
		e.w.Write(b[1 : len(b)-1]) //nolint:errcheck // see key
		s = s[n:]
	}
	e.w.WriteByte('"') //nolint:errcheck // see key
}

// plainText writes s as encoding/json (without HTML escaping) writes a
// string, straight into the output: the runs of plain bytes as they are
// (found eight at a time, strictjson.PlainEnd), '"', '\\' and control
// bytes escaped as encoding/json escapes them, valid UTF-8 as it is,
// each invalid byte as \ufffd and U+2028, U+2029 as \u2028, \u2029.
// Hand-written because encoding a capture's 10 MB of output through
// encoding/json, a piece at a time, cost more than checking it; the
// rules are encoding/json's appendString (Go 1.26), and
// TestWriteJSONIsEncode and FuzzPlainText hold the two byte-identical.
func (e *recordWriter) plainText(s string) {
	w := e.w
	w.WriteByte('"') //nolint:errcheck // see key
	for i := 0; i < len(s); {
		j := strictjson.PlainEndString(s, i)
		w.WriteString(s[i:j]) //nolint:errcheck // see key
		if j >= len(s) {
			break
		}
		c := s[j]
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				w.WriteByte('\\') //nolint:errcheck // see key
				w.WriteByte(c)    //nolint:errcheck // see key
			case '\b':
				w.WriteString(`\b`) //nolint:errcheck // see key
			case '\f':
				w.WriteString(`\f`) //nolint:errcheck // see key
			case '\n':
				w.WriteString(`\n`) //nolint:errcheck // see key
			case '\r':
				w.WriteString(`\r`) //nolint:errcheck // see key
			case '\t':
				w.WriteString(`\t`) //nolint:errcheck // see key
			default:
				w.WriteString(`\u00`)   //nolint:errcheck // see key
				w.WriteByte(hex[c>>4])  //nolint:errcheck // see key
				w.WriteByte(hex[c&0xF]) //nolint:errcheck // see key
			}
			i = j + 1
			continue
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		switch {
		case r == utf8.RuneError && n == 1:
			w.WriteString(`\ufffd`) //nolint:errcheck // see key
		case r == '\u2028' || r == '\u2029':
			w.WriteString(`\u202`)  //nolint:errcheck // see key
			w.WriteByte(hex[r&0xF]) //nolint:errcheck // see key
		default:
			w.WriteString(s[j : j+n]) //nolint:errcheck // see key
		}
		i = j + n
	}
	w.WriteByte('"') //nolint:errcheck // see key
}

// hex is encoding/json's hexadecimal digits.
const hex = "0123456789abcdef"

// writeList writes list as encoding/json writes a slice: null when nil,
// else its elements in brackets, separated by commas.
func writeList[T any](e *recordWriter, list []T) {
	if list == nil {
		e.w.WriteString("null") //nolint:errcheck // see key
		return
	}
	e.w.WriteByte('[') //nolint:errcheck // see key
	for i := range list {
		if i > 0 {
			e.w.WriteByte(',') //nolint:errcheck // see key
		}
		e.value(&list[i])
	}
	e.w.WriteByte(']') //nolint:errcheck // see key
}

// AppendJSON appends r's JSON (WriteJSON's bytes) to dst and returns the
// extended slice. It grows dst once, by an estimate of the encoding's
// size (the text of the frames with room for escapes), before it
// encodes, so a 10 MB record is not copied through ever larger buffers.
func (r *Record) AppendJSON(dst []byte, escapeHTML bool) ([]byte, error) {
	b := bytes.NewBuffer(dst)
	b.Grow(r.sizeHint())
	if err := r.WriteJSON(b, escapeHTML); err != nil {
		return dst, err
	}
	return b.Bytes(), nil
}

// sizeHint estimates the size of r's JSON: its frames' text, an eighth
// more for escapes, and 64 KiB for the rest.
func (r *Record) sizeHint() int {
	n := 0
	for i := range r.Frames {
		n += len(r.Frames[i].Data) + 32
	}
	for i := range r.RenderedFrames {
		f := &r.RenderedFrames[i]
		n += len(f.SerializedState) + 160
		for _, l := range f.Lines {
			n += len(l) + 3
		}
	}
	return n + n/8 + 64<<10
}

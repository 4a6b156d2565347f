package asciicast

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/capture"
)

const v2Head = `{"version": 2, "width": 20, "height": 4}` + "\n"

// rejected imports data and returns the issues, failing if it was accepted.
func rejected(t *testing.T, data string) []Issue {
	t.Helper()
	rec, err := Import(th, []byte(data), "t.cast")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("accepted (%v): %+v", err, rec)
	}
	return e.Issues
}

func TestMalformedInputIsRejectedWithLineAndPath(t *testing.T) {
	cases := []struct {
		name, data string
		line       int
		path, code string
	}{
		{"empty", "", 1, "$", CodeEmpty},
		{"blank header", "\n[0, \"o\", \"x\"]\n", 1, "$", CodeEmpty},
		{"comment header", "# hi\n" + v2Head, 1, "$", CodeCommentNotAllowed},
		{"header not json", "{version: 2}\n", 1, "$", CodeInvalidJSON},
		{"header array", "[2]\n", 1, "$", CodeWrongType},
		{"v1 without stdout", `{"version": 1, "width": 2, "height": 2}`, 0, "$.stdout", CodeMissingField},
		{"v1 header with event lines", `{"version": 1, "width": 2, "height": 2}` + "\n" + `[0, "o", "x"]`, 1, "$.version", CodeUnsupported},
		{"v1 bad frame", `{"version": 1, "width": 2, "height": 2, "stdout": [[0.5, "a"], [-1, "b"]]}`, 0, "$.stdout[1][0]", CodeInvalidValue},
		{"v1 frame of 3", `{"version": 1, "width": 2, "height": 2, "stdout": [[0.5, "o", "a"]]}`, 0, "$.stdout[0]", CodeWrongType},
		{"width negative", `{"version": 2, "width": -1, "height": 2}`, 1, "$.width", CodeInvalidValue},
		{"empty code", v2Head + `[0, "", "x"]`, 2, "$[1]", CodeUnknownEvent},
		{"v2 bad exit", v2Head + `[0, "x", "-1"]`, 2, "$[2]", CodeInvalidValue},
		{"idle negative", `{"version": 2, "width": 2, "height": 2, "idle_time_limit": -1}`, 1, "$.idle_time_limit", CodeInvalidValue},
		{"env value object", `{"version": 2, "width": 2, "height": 2, "env": {"TERM": {}}}`, 1, "$.env.TERM", CodeWrongType},
		{"version string", `{"version": "2", "width": 2, "height": 2}`, 1, "$.version", CodeWrongType},
		{"no version", `{"width": 2, "height": 2}`, 1, "$.version", CodeMissingField},
		{"no width", `{"version": 2, "height": 2}`, 1, "$.width", CodeMissingField},
		{"height 1001", `{"version": 2, "width": 2, "height": 1001}`, 1, "$.height", CodeInvalidValue},
		{"duplicate key", `{"version": 2, "width": 2, "width": 3, "height": 2}`, 1, "$.width", CodeInvalidJSON},
		{"env value number", `{"version": 2, "width": 2, "height": 2, "env": {"TERM": 1}}`, 1, "$.env.TERM", CodeWrongType},
		{"v3 no term", `{"version": 3}`, 1, "$.term", CodeMissingField},
		{"v3 term cols", `{"version": 3, "term": {"cols": "80", "rows": 24}}`, 1, "$.term.cols", CodeWrongType},
		{"event object", v2Head + `{"t": 0}`, 2, "$", CodeWrongType},
		{"event 2 elements", v2Head + `[0, "o"]`, 2, "$", CodeWrongType},
		{"event bad json", v2Head + `[0, "o", "x"`, 2, "$", CodeInvalidJSON},
		{"event trailing", v2Head + `[0, "o", "x"] 1`, 2, "$", CodeInvalidJSON},
		{"negative time", v2Head + `[-1, "o", "x"]`, 2, "$[0]", CodeInvalidValue},
		{"time string", v2Head + `["1", "o", "x"]`, 2, "$[0]", CodeWrongType},
		{"data number", v2Head + `[1, "o", 5]`, 2, "$[2]", CodeWrongType},
		{"v2 time goes back", v2Head + "[1, \"o\", \"a\"]\n[0.5, \"o\", \"b\"]", 3, "$[0]", CodeTimeOrder},
		{"bad resize", v2Head + `[0, "r", "80x"]`, 2, "$[2]", CodeInvalidValue},
		{"resize 0", v2Head + `[0, "r", "0x5"]`, 2, "$[2]", CodeInvalidValue},
		{"resize padded", v2Head + `[0, "r", "080x5"]`, 2, "$[2]", CodeInvalidValue},
		{"invalid utf8", v2Head + "[0, \"o\", \"\xff\"]", 2, "$", CodeInvalidUTF8},
		{"lone surrogate", v2Head + `[0, "o", "\ud800"]`, 2, "$[2]", CodeInvalidValue},
		{"v3 bad exit", `{"version": 3, "term": {"cols": 8, "rows": 2}}` + "\n" + `[0, "x", "abc"]`, 2, "$[2]", CodeInvalidValue},
		{"v3 exit 256", `{"version": 3, "term": {"cols": 8, "rows": 2}}` + "\n" + `[0, "x", "256"]`, 2, "$[2]", CodeInvalidValue},
		{"too long", v2Head + fmt.Sprintf(`[%d.001, "o", "x"]`, MaxDurationMS/1000), 2, "$[0]", CodeInvalidValue},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := rejected(t, c.data)
			if is[0].Line != c.line || is[0].Path != c.path || is[0].Code != c.code {
				t.Fatalf("first issue %v, want line %d %s at %s (all: %v)", is[0], c.line, c.code, c.path, is)
			}
		})
	}
}

func TestEveryBadLineIsReported(t *testing.T) {
	data := v2Head + "[0, \"o\", \"a\"]\n[0, \"q\", \"b\"]\nnope\n[1, \"r\", \"1x1\"]\n[2, \"o\", 3]\n"
	is := rejected(t, data)
	var got []string
	for _, i := range is {
		got = append(got, fmt.Sprintf("%d:%s", i.Line, i.Code))
	}
	// the unknown code "q" on line 3 is tolerated, as asciinema does
	if strings.Join(got, " ") != "4:invalid_json 6:wrong_type" {
		t.Fatalf("issues %v", is)
	}
	if e := (&Error{Issues: is}).Error(); !strings.Contains(e, "line 6: wrong_type at $[2]") {
		t.Errorf("message %q", e)
	}
}

func TestNameIsChecked(t *testing.T) {
	for _, name := range []string{"", "a\nb", strings.Repeat("n", 256)} {
		if _, err := Import(th, []byte(v2Head), name); err == nil || !strings.Contains(err.Error(), "name") {
			t.Errorf("name %q: %v", name, err)
		}
	}
	if _, err := Import(th, []byte(v2Head), strings.Repeat("n", 255)); err != nil {
		t.Errorf("255-byte name: %v", err)
	}
}

func TestV3IntervalsCommentsMarkersAndExit(t *testing.T) {
	data := `{"version": 3, "term": {"cols": 12, "rows": 3, "type": "xterm-256color", "theme": {"fg": "#fff", "bg": "#000", "palette": "#000:#111"}}, "timestamp": 1504467315, "title": "Demo", "env": {"SHELL": "/bin/zsh"}, "tags": ["a"], "idle_time_limit": 2.5}
# the stream follows
[0.250, "o", "hello"]
[1.000, "o", "\r\nworld"]
[0.5, "m", "mark"]
[0.125, "r", "14x2"]
[0.000, "i", "q"]
[0.887, "x", "3"]
`
	rec, err := Import(th, []byte(data), "demo.cast")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Frames) != 2 || rec.Frames[0].AtMS != 250 || rec.Frames[1].AtMS != 1250 {
		t.Fatalf("frames %+v", rec.Frames)
	}
	if len(rec.Markers) != 1 || rec.Markers[0].AtMS != 1750 || rec.Markers[0].Label != "mark" {
		t.Errorf("markers %+v", rec.Markers)
	}
	if len(rec.RenderedFrames) != 3 || rec.RenderedFrames[2].AtMS != 1875 || rec.RenderedFrames[2].Columns != 14 || rec.RenderedFrames[2].Rows != 2 {
		t.Fatalf("rendered %+v", rec.RenderedFrames)
	}
	if l := rec.RenderedFrames[1].Lines; l[0] != "hello       " || l[1] != "world       " {
		t.Errorf("lines %q", l)
	}
	if rec.Origin.ExitStatus == nil || *rec.Origin.ExitStatus != 3 || *rec.Origin.Title != "Demo" || *rec.Origin.Timestamp != 1504467315 ||
		*rec.Origin.TermType != "xterm-256color" || *rec.Origin.IdleTimeLimit != 2.5 || rec.Origin.Version != 3 {
		t.Errorf("origin %+v", rec.Origin)
	}
	if rec.Dimensions.Exit != DimensionUnknown { // an exit status from a file is not an observed exit
		t.Errorf("dimensions %+v", rec.Dimensions)
	}
	if len(rec.InteractionEvents) != 2 || rec.InteractionEvents[1].Data != "q" || rec.InteractionEvents[1].DispatchedAtMS != 1875 {
		t.Errorf("interaction %+v", rec.InteractionEvents)
	}
}

// events builds a file of n event lines made by line(i).
func events(head string, n int, line func(i int) string) []byte {
	var b bytes.Buffer
	b.WriteString(head)
	for i := range n {
		b.WriteString(line(i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestLimitsAtTheLimitAndOnePast(t *testing.T) {
	tiny := `{"version": 2, "width": 1, "height": 1}` + "\n"
	marker := func(int) string { return `[0, "m", ""]` }

	t.Run("events", func(t *testing.T) {
		if _, err := Import(th, events(tiny, MaxEvents, marker), "t"); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		is := rejected(t, string(events(tiny, MaxEvents+1, marker)))
		if len(is) != 1 || is[0].Code != CodeTooManyEvents || is[0].Line != MaxEvents+2 {
			t.Fatalf("one past: %v", is)
		}
	})
	t.Run("output bytes", func(t *testing.T) {
		chunk := strings.Repeat(`\r`, MaxOutputBytes/10) // one byte each, cheap for the emulator
		out := func(int) string { return `[0, "o", "` + chunk + `"]` }
		if _, err := Import(th, events(tiny, 10, out), "t"); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		data := events(tiny, 10, out)
		data = append(data, `[0, "o", "b"]`...)
		is := rejected(t, string(data))
		if len(is) != 1 || is[0].Code != CodeOutputTooLarge || is[0].Line != 12 || is[0].Path != "$[2]" {
			t.Fatalf("one past: %v", is)
		}
	})
	t.Run("rendered bytes", func(t *testing.T) {
		// Every event leaves the same 1000×1 screen (524 "─" then blanks),
		// so each kept frame has the same size: n frames fit in
		// MaxRenderedBytes and n+1 do not. The size comes from the
		// renderer itself, not from a guess about its format.
		line := strings.Repeat("─", 524)
		r, err := capture.NewRenderer(th, capture.Terminal{Columns: 1000, Rows: 1, Scrollback: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		f, err := r.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		size := len(f.SerializedState) + len(f.Lines[0])
		n := MaxRenderedBytes / size
		wide := `{"version": 2, "width": 1000, "height": 1}` + "\n"
		ev := func(i int) string {
			if i == 0 {
				return `[0, "o", "` + line + `"]`
			}
			return `[0, "o", ""]`
		}
		rec, err := Import(th, events(wide, n, ev), "t")
		if err != nil || len(rec.RenderedFrames) != n || len(rec.Limitations) != 3 {
			t.Fatalf("at the limit (%d frames of %d bytes): every screen kept: %v", n, size, err)
		}
		// One past: every second screen is kept (and the last), the raw
		// frames stay complete, and a limitation says so.
		rec, err = Import(th, events(wide, n+1, ev), "t")
		if err != nil {
			t.Fatalf("one past: %v", err)
		}
		kept := (n + 2) / 2
		if len(rec.Frames) != n+1 || len(rec.RenderedFrames) != kept || rec.RenderedFrames[kept-1].Sequence != kept-1 ||
			!strings.Contains(rec.Limitations[len(rec.Limitations)-1], "every 2nd output or resize event") {
			t.Fatalf("one past: %d frames, %d screens (want %d), %q", len(rec.Frames), len(rec.RenderedFrames), kept, rec.Limitations)
		}
	})
	t.Run("input bytes", func(t *testing.T) {
		at := make([]byte, MaxInputBytes)
		copy(at, tiny)
		for i := len(tiny); i < len(at); i++ {
			at[i] = ' ' // blank event lines: a valid, empty recording
		}
		if _, err := Import(th, at, "t"); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
		is := rejected(t, string(append(at, ' ')))
		if len(is) != 1 || is[0].Code != CodeTooLarge || is[0].Line != 0 {
			t.Fatalf("one past: %v", is)
		}
	})
	t.Run("duration", func(t *testing.T) {
		at := fmt.Sprintf(`[%d.000, "m", ""]`, MaxDurationMS/1000)
		if _, err := Import(th, []byte(tiny+at), "t"); err != nil {
			t.Fatalf("at the limit: %v", err)
		}
	})
	t.Run("issues", func(t *testing.T) {
		is := rejected(t, string(events(tiny, 500, func(int) string { return "x" })))
		if len(is) != MaxIssues || is[MaxIssues-1].Code != CodeTooManyIssues {
			t.Fatalf("%d issues, last %v", len(is), is[len(is)-1])
		}
	})
}

func TestParseRecordingRejectsClaims(t *testing.T) {
	rec, err := Import(th, []byte(v2Head+`[0.5, "o", "hi"]`), "t.cast")
	if err != nil {
		t.Fatal(err)
	}
	rec.Dimensions.Process = DimensionObserved // an import never observed a process
	_, raw, err := Evidence(rec)
	if err != nil {
		t.Fatal(err)
	}
	_ = raw
	norm, _ := marshalPlain(rec)
	if _, err := ParseRecording(norm); err == nil || !strings.Contains(err.Error(), "dimensions") {
		t.Fatalf("accepted a recording that claims process evidence: %v", err)
	}
	if _, err := ParseRecording([]byte(`{"schema_version":1,"extra":true}`)); err == nil {
		t.Fatal("accepted an unknown member")
	}
}

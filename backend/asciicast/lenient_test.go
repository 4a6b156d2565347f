package asciicast

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// importFixture imports testdata/lenient/name and returns the recording
// and its tolerance limitations (those after the three every import has).
func importFixture(t *testing.T, name string) (*Recording, []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "lenient", name))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Import(th, data, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return rec, rec.Limitations[3:]
}

func wantTolerances(t *testing.T, got []string, want ...string) {
	t.Helper()
	for i := range got {
		got[i] = strings.TrimSuffix(strings.TrimPrefix(got[i], "Read leniently, as asciinema reads it: "), ".")
	}
	if !slices.Equal(got, want) {
		t.Errorf("tolerances\n got %q\nwant %q", got, want)
	}
}

func frameData(rec *Recording) []string {
	var out []string
	for _, f := range rec.Frames {
		out = append(out, f.Data)
	}
	return out
}

func TestImportV1Document(t *testing.T) {
	rec, tol := importFixture(t, "v1-document.json")
	if rec.Origin.Version != 1 || rec.Terminal.Columns != 16 || rec.Terminal.Rows != 3 || rec.Origin.Title != nil ||
		*rec.Origin.Command != "/bin/sh" || *rec.Origin.TermType != "xterm-256color" {
		t.Errorf("origin %+v terminal %+v", rec.Origin, rec.Terminal)
	}
	if d := frameData(rec); !slices.Equal(d, []string{"one", "\r\ntwo", "\x1b[1mthree\x1b[0m"}) {
		t.Errorf("frames %q", d)
	}
	if at := []int{rec.Frames[0].AtMS, rec.Frames[1].AtMS, rec.Frames[2].AtMS}; !slices.Equal(at, []int{500, 750, 1750}) {
		t.Errorf("v1 delays not summed: %v", at)
	}
	if l := rec.RenderedFrames[2].Lines; l[0] != "one             " || l[1] != "twothree        " {
		t.Errorf("screen %q", l)
	}
	wantTolerances(t, tol, tolV1,
		`header keys asciicast does not define were ignored: "recorded_by"`,
		`env values that were null were treated as absent: "SHELL"`)
	if _, _, err := Evidence(rec); err != nil {
		t.Fatal(err)
	}

	rec, tol = importFixture(t, "v1-one-line-zero-size.json")
	if rec.Terminal.Columns != 80 || rec.Terminal.Rows != 24 || len(rec.Frames) != 2 || rec.Frames[1].AtMS != 1 {
		t.Errorf("terminal %+v frames %+v", rec.Terminal, rec.Frames)
	}
	wantTolerances(t, tol, tolV1, tolSizeZero)
}

func TestImportV2Leniently(t *testing.T) {
	rec, tol := importFixture(t, "v2-lenient.cast")
	if rec.Origin.Version != 2 || rec.Terminal.Columns != 10 || *rec.Origin.Timestamp != 1700000000 || rec.Origin.IdleTimeLimit != nil ||
		rec.Origin.ExitStatus == nil || *rec.Origin.ExitStatus != 7 || rec.Origin.Title != nil {
		t.Errorf("origin %+v", rec.Origin)
	}
	if d := frameData(rec); !slices.Equal(d, []string{"hi"}) || len(rec.Markers) != 1 || rec.Markers[0].AtMS != 400 {
		t.Errorf("frames %q markers %+v", d, rec.Markers)
	}
	wantTolerances(t, tol, tolBOM, tolTimeDecimal, tolIdleZero, tolV2Comment, tolV2Exit,
		`header keys asciicast does not define were ignored: "x-editor", "theme.name"`,
		`env values that were null were treated as absent: "TERM"`,
		`events with codes asciicast does not define were ignored, as asciinema-player ignores them: "q", "z"`)
}

func TestImportV3Leniently(t *testing.T) {
	rec, tol := importFixture(t, "v3-lenient.cast")
	if rec.Origin.Version != 3 || rec.Terminal.Columns != 80 || rec.Terminal.Rows != 4 || rec.Origin.TermType != nil ||
		*rec.Origin.IdleTimeLimit != 1.5 || *rec.Origin.ExitStatus != 0 {
		t.Errorf("origin %+v terminal %+v", rec.Origin, rec.Terminal)
	}
	// the unknown event's interval still counts: b is at 0.75 s
	if d := frameData(rec); !slices.Equal(d, []string{"a", "b"}) || rec.Frames[1].AtMS != 750 {
		t.Errorf("frames %+v", rec.Frames)
	}
	wantTolerances(t, tol, tolSizeZero,
		`header keys asciicast does not define were ignored: "client", "term.colour_depth"`,
		`env values that were null were treated as absent: "TERM"`,
		`events with codes asciicast does not define were ignored, as asciinema-player ignores them: "Q"`)
}

// TestToleranceNamesAreQuotedAndBounded: names from the file reach the
// limitations quoted (no live control character) and at most
// maxToleratedNames of them.
func TestToleranceNamesAreQuotedAndBounded(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"version": 2, "width": 4, "height": 1, "\u001b[2Jx": 1}` + "\n")
	for _, c := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "j", "k", "\u0007"} {
		ev, _ := json.Marshal([]any{0, c, ""})
		b.Write(append(ev, '\n'))
	}
	rec, err := Import(th, b.Bytes(), "t.cast")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range rec.Limitations {
		if strings.ContainsAny(l, "\x1b\x07") {
			t.Errorf("a control character reached a limitation: %q", l)
		}
	}
	last := rec.Limitations[len(rec.Limitations)-1]
	if !strings.HasSuffix(last, `"h" and 3 more.`) || !strings.Contains(rec.Limitations[3], `"\x1b[2Jx"`) {
		t.Errorf("limitations %q", rec.Limitations)
	}
}

// TestExportParsesBackByteExact exports each lenient fixture's recording
// as asciicast v2, reads the export the way asciinema-player does (first
// line the header, the lines starting with "[" the events) and with
// Import, and exports that again: the bytes are the same, the export
// needs no tolerance, and the player's reading yields the same output.
func TestExportParsesBackByteExact(t *testing.T) {
	for _, name := range []string{"v1-document.json", "v1-one-line-zero-size.json", "v2-lenient.cast", "v3-lenient.cast"} {
		rec, _ := importFixture(t, name)
		out, err := ExportRecording(rec)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Import(th, out, "export.cast")
		if err != nil {
			t.Fatalf("%s: the export does not import: %v\n%s", name, err, out)
		}
		if len(back.Limitations) != 3 {
			t.Errorf("%s: the export needed tolerances: %q", name, back.Limitations[3:])
		}
		again, err := ExportRecording(back)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, again) {
			t.Errorf("%s: export → import → export changed the bytes:\n%s\n%s", name, out, again)
		}
		lines := strings.Split(string(out), "\n")
		var head struct{ Version, Width, Height int }
		if err := json.Unmarshal([]byte(lines[0]), &head); err != nil || head.Version != 2 ||
			head.Width != rec.Terminal.Columns || head.Height != rec.Terminal.Rows {
			t.Errorf("%s: header %q (%v)", name, lines[0], err)
		}
		var output []string
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "[") {
				continue
			}
			var ev [3]any
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("%s: event %q: %v", name, l, err)
			}
			if ev[1] == "o" {
				output = append(output, ev[2].(string))
			}
		}
		if !slices.Equal(output, frameData(rec)) {
			t.Errorf("%s: the player would read %q, want %q", name, output, frameData(rec))
		}
	}
}

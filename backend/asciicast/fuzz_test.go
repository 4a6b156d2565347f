package asciicast

import (
	"errors"
	"testing"
)

// FuzzImport feeds arbitrary bytes to Import: it must never panic or hang,
// must either accept or fail with an *Error whose issues carry a code and
// a path, and whatever it accepts must export and import again to the
// same frames.
func FuzzImport(f *testing.F) {
	f.Add([]byte(v2Head + "[0.1, \"o\", \"hi\\r\\n\"]\n[0.2, \"r\", \"10x3\"]\n[0.3, \"i\", \"q\"]\n[0.4, \"m\", \"m\"]\n"))
	f.Add([]byte(`{"version": 3, "term": {"cols": 5, "rows": 2}}` + "\n# c\n[0.5, \"o\", \"\\u001b[31mx\"]\n[0.1, \"x\", \"0\"]\n"))
	f.Add([]byte(`{"version": 2, "width": 1, "height": 1}`))
	f.Add([]byte("[0, \"o\", \"x\"]"))
	f.Add([]byte(`{"version": 3, "term": {"cols": 2, "rows": 2, "theme": {"fg": "#000"}}, "tags": ["x"]}` + "\n[1e300, \"o\", \"x\"]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		rec, err := Import(th, data, "fuzz.cast")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || len(e.Issues) == 0 || len(e.Issues) > MaxIssues {
				t.Fatalf("error %v is not a bounded *Error", err)
			}
			for _, is := range e.Issues {
				if is.Code == "" || is.Path == "" {
					t.Fatalf("issue without code or path: %+v", is)
				}
			}
			return
		}
		out, err := ExportRecording(rec)
		if err != nil {
			t.Fatalf("export: %v", err)
		}
		again, err := Import(th, out, "again.cast")
		if err != nil {
			t.Fatalf("re-import of the export: %v\n%s", err, out)
		}
		if len(again.Frames) != len(rec.Frames) {
			t.Fatalf("frames %d, want %d", len(again.Frames), len(rec.Frames))
		}
		for i := range rec.Frames {
			if again.Frames[i] != rec.Frames[i] {
				t.Fatalf("frame %d: %+v, want %+v", i, again.Frames[i], rec.Frames[i])
			}
		}
	})
}

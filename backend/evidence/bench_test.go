package evidence

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gowebpki/jcs"
)

// BenchmarkParse parses a capture envelope with 10,000 frames (about 1 MB),
// reporting throughput so it can be compared with encoding/json below.
func BenchmarkParse(b *testing.B) {
	var frames strings.Builder
	for i := 0; i < 10000; i++ {
		if i > 0 {
			frames.WriteByte(',')
		}
		fmt.Fprintf(&frames, `{"sequence":%d,"at_ms":%d,"data":"line %d of output \u001b[32mok\u001b[0m\r\n"}`, i, i*3, i)
	}
	e := sampleCapture()
	e.NormalizedResult = json.RawMessage(`{"frames":[` + frames.String() + `],"truncated":false}`)
	data := sealed(b, e)
	b.Run("Parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, issues := Parse(data); issues != nil {
				b.Fatal(issues)
			}
		}
	})
	b.Run("encoding/json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSeal10MB seals a capture envelope of about 10 MB (100,000 raw
// frames) and canonicalizes it, next to jcs.Transform, the reference
// canonicalizer, on the same bytes.
func BenchmarkSeal10MB(b *testing.B) {
	var frames strings.Builder
	for i := 0; i < 100000; i++ {
		if i > 0 {
			frames.WriteByte(',')
		}
		fmt.Fprintf(&frames, `{"sequence":%d,"at_ms":%d,"data":"line %d of output \u001b[32mok\u001b[0m padding padding padding padding\r\n"}`, i, i*3, i)
	}
	e := sampleCapture()
	e.NormalizedResult = json.RawMessage(`{"frames":[` + frames.String() + `],"truncated":false}`)
	data := sealed(b, e)
	b.Run("Seal", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			c := *e
			if err := Seal(&c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Canonicalize", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := Canonicalize(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jcs.Transform", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := jcs.Transform(data); err != nil {
				b.Fatal(err)
			}
		}
	})
}

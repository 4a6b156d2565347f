package asciicast

import (
	"fmt"
	"testing"
)

// benchCast is an 80×24 recording of n output events: coloured lines that
// scroll, as a build log would print them (about 60 bytes each).
func benchCast(n int) []byte {
	return events(`{"version": 2, "width": 80, "height": 24}`+"\n", n, func(i int) string {
		return fmt.Sprintf(`[%d.%03d, "o", "\u001b[32mok\u001b[0m step %05d: compiled package %d\r\n"]`, i/100, (i%100)*10, i, i%97)
	})
}

// BenchmarkImport measures Import (parse, rebuild every screen, build the
// Recording) of a 2,000-event 80×24 recording; -benchmem shows its memory.
func BenchmarkImport(b *testing.B) {
	data := benchCast(2000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Import(th, data, "bench.cast"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExportRecording measures writing the same recording back as
// asciicast v2 (the export path of captures shares write()).
func BenchmarkExportRecording(b *testing.B) {
	rec, err := Import(th, benchCast(2000), "bench.cast")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ExportRecording(rec); err != nil {
			b.Fatal(err)
		}
	}
}

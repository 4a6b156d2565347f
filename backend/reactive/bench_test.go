package reactive

import (
	"bytes"
	"strings"
	"testing"
)

// benchFrames is 1,000 frames of 1 KiB output without the awaited text,
// then the text.
var benchFrames = func() []string {
	out := make([]string, 0, 1001)
	for i := 0; i < 1000; i++ {
		out = append(out, strings.Repeat("output line\r\n", 79)[:1024])
	}
	return append(out, "Name? ")
}()

// BenchmarkRunnerAdmit admits benchFrames to a runner whose state waits
// for "Name? " (any of it or an interaction event), which fires at the
// last frame. Compare with BenchmarkBaselineAppendIndex: the ratio is the
// cost of live evaluation over merely buffering the output and searching
// it once.
func BenchmarkRunnerAdmit(b *testing.B) {
	doc := graph(st("a", 1, tr("ask", 1, 1, `{"kind":"any","of":[`+text("Name? ")+`,{"kind":"event","source":"interaction","exact":{"type":"input"}}]}`, "", pass)))
	sc, issues := Parse([]byte(doc), Context{})
	if len(issues) > 0 {
		b.Fatal(issues)
	}
	b.SetBytes(int64(1000*1024 + 6))
	b.ReportAllocs()
	for b.Loop() {
		r := NewRunner(sc, &fakeExec{}, func() int { return 0 }, 10)
		r.Start()
		for i, f := range benchFrames {
			r.Admit(Observation{Collection: "frames", Index: i, Source: SourceTerminalRaw, Text: f})
		}
		if r.Run().Outcome != OutcomePassed {
			b.Fatal("did not pass")
		}
	}
}

// BenchmarkBaselineAppendIndex buffers the same frames and searches the
// whole text once.
func BenchmarkBaselineAppendIndex(b *testing.B) {
	b.SetBytes(int64(1000*1024 + 6))
	b.ReportAllocs()
	for b.Loop() {
		var buf []byte
		for _, f := range benchFrames {
			buf = append(buf, f...)
		}
		if bytes.Index(buf, []byte("Name? ")) < 0 {
			b.Fatal("not found")
		}
	}
}

package capture

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestRendererWarmedWhileIdleRendersTheSame holds the helper's warm-up
// while idle (helper.mjs warmWhileIdle: sample output rendered on a
// terminal of its own before the first input) to changing nothing a
// capture sees: a helper left idle long enough to warm up, and one left
// idle only part of the way (its warm-up stopped by the first input),
// render every frame and count every fast-forward cut exactly as one
// given its input at once.
func TestRendererWarmedWhileIdleRendersTheSame(t *testing.T) {
	h := testHelper(t)
	term := Terminal{Columns: 80, Rows: 24, Scrollback: 100}
	// plain lines enough to be cut (fastforward.mjs), colours, a full
	// screen program, wide characters and a resize
	var stream bytes.Buffer
	for i := range 3000 {
		fmt.Fprintf(&stream, "plain line %d of the idle warm-up test, long enough to wrap at some widths......\n", i)
	}
	for i := range 300 {
		fmt.Fprintf(&stream, "\x1b[1;3%dmcolour %d\x1b[0m é中\r\n", i%8, i)
	}
	stream.WriteString("\x1b[?1049h\x1b[2J\x1b[Hfull screen\x1b[5;10r\x1b[3bX\x1b[?1049l\x1b]0;t\x07")
	data := stream.Bytes()
	render := func(idle time.Duration) ([]RenderedFrame, fastStats) {
		s := startTestScreen(t, h, term)
		time.Sleep(idle)
		var frames []RenderedFrame
		for i := 0; i < len(data); i += benchChunk {
			if err := s.write(data[i:min(i+benchChunk, len(data))]); err != nil {
				t.Fatal(err)
			}
			if i == len(data)/2 {
				if err := s.resize(100, 30); err != nil {
					t.Fatal(err)
				}
			}
			frames = append(frames, xsnap(t, s))
		}
		st, err := s.stats()
		if err != nil {
			t.Fatal(err)
		}
		return frames, st
	}
	want, wantStats := render(0)
	if wantStats.Cuts == 0 {
		t.Fatalf("the stream was never cut (%+v): it does not exercise the fast-forward", wantStats)
	}
	for _, idle := range []time.Duration{150 * time.Millisecond, 2 * time.Second} {
		got, gotStats := render(idle)
		if gotStats != wantStats {
			t.Errorf("idle %v: fast-forward statistics %+v, want %+v", idle, gotStats, wantStats)
		}
		if len(got) != len(want) {
			t.Fatalf("idle %v: %d frames, want %d", idle, len(got), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Fatalf("idle %v: frame %d differs:\n got %+v\nwant %+v", idle, i, got[i], want[i])
			}
		}
	}
}

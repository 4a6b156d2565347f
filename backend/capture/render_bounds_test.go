package capture

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestRendererBoundsXtermsCounts is from the side of a target whose output
// asks xterm.js for a huge count (frontend/renderer/bounds.mjs): without
// the bounds, ESC[2147483647L keeps the helper busy for minutes (this
// test's helper times out at 5 s) and a huge REP allocates gigabytes.
// Each screen must be the one of the smallest count that does the same:
// the row count for IL, DL, SU and SD, the column count for CBT and CHT,
// and for REP the repeated text written out.
func TestRendererBoundsXtermsCounts(t *testing.T) {
	h := testHelper(t)
	h.Timeout = 5 * time.Second
	term := Terminal{Columns: 12, Rows: 5, Scrollback: 10}
	// a screen with text on every row, the cursor in the middle, a
	// scroll region and tab stops set
	setup := "\x1b[41maaaa\r\nbbbbbbbb\r\ncccc\x1b[0m\r\ndddddd\r\neeeeeee\x1b[2;4r\x1b[3;5H\x1b[3g\x1bH\x1b[8G\x1bH\x1b[4G"
	render := func(t *testing.T, s *screen, text string) RenderedFrame {
		t.Helper()
		if err := s.reset(term); err != nil {
			t.Fatal(err)
		}
		if err := s.write([]byte(text)); err != nil {
			t.Fatal(err)
		}
		return xsnap(t, s)
	}
	s := startTestScreen(t, h, term)
	for _, tc := range []struct{ huge, same string }{
		{"\x1b[2147483647L", "\x1b[5L"},
		{"\x1b[2147483647M", "\x1b[5M"},
		{"\x1b[2147483647S", "\x1b[5S"},
		{"\x1b[2147483647T", "\x1b[5T"},
		{"\x1b[?6h\x1b[2147483647S", "\x1b[?6h\x1b[5S"},
		{"\x1b[2147483647Z", "\x1b[12Z"},
		{"\x1b[2147483647I", "\x1b[12I"},
		{"\x1b[r\x1b[5;1Hx\x1b[20000b", "\x1b[r\x1b[5;1Hx" + strings.Repeat("x", 20000)},
		{"\x1b[r\x1b[5;1H\u4e2d\x1b[9000b", "\x1b[r\x1b[5;1H" + strings.Repeat("\u4e2d", 9001)},
		{"\x1b[r\x1b[5;1He\u0301\x1b[4097b", "\x1b[r\x1b[5;1H" + strings.Repeat("e\u0301", 4098)},
		{"\x1b[?7l\x1b[4hx\x1b[8193b", "\x1b[?7l\x1b[4h" + strings.Repeat("x", 8194)},
	} {
		start := time.Now()
		got := render(t, s, setup+tc.huge)
		took := time.Since(start)
		want := render(t, s, setup+tc.same)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: the screen is not the one of %q:\n got %q\nwant %q", tc.huge, tc.same, got.Lines, want.Lines)
		}
		t.Logf("%q: %v", tc.huge, took)
	}
}

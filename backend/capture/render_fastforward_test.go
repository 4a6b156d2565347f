package capture

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fastForwardTokens are the state changes mixed between long runs of plain
// text in TestFastForwardMatchesFullParse: everything that changes what
// plain text means to x/vt (margins, modes, character sets, alternate
// screens, resets, unfinished sequences), colours whose background fills
// scrolled-in rows, and cursor moves.
var fastForwardTokens = []string{
	"\x1b[%d;%dr", "\x1b[r", "\x1b[?1049h", "\x1b[?1049l", "\x1b[?47h", "\x1b[?47l", "\x1b[?1047h", "\x1b[?1047l",
	"\x1b[20h", "\x1b[20l", "\x1b[?69h", "\x1b[?69l", "\x1b[%d;%ds", "\x1b[?6h", "\x1b[?6l", "\x1b[?7l", "\x1b[?7h",
	"\x1b[4h", "\x1b[4l", "\x1b(0", "\x1b(B", "\x1b)0", "\x1b)B", "\x1b(A", "\x1b*0", "\x1b+A", "\x0e", "\x0f",
	"\x1bn", "\x1bo", "\x1bN", "\x1bO", "\x1bc", "\x1b[!p", "\x1b[44m", "\x1b[0m", "\x1b[1;31m", "\x1b[48;5;%dm",
	"\x1b[%d;%dH", "\x1b[%dA", "\x1b[%dB", "\x1bM", "\x1b7", "\x1b8", "\x1b[2J", "\x1b[K", "\x1b[%dS", "\x1b[%dT",
	"\x1b[" + strings.Repeat("1;", 40) + "m", "\x1b(" + strings.Repeat(" ", 70), "\x1b[%db", "\t", "\b", "é", "日",
	"\x1b]0;title\x07", "\x1b]2;t\x1bx",
}

// plainRun is a long run of plain text: lines shorter than, as long as and
// longer than the screen is wide, ended by CR LF, LF or CR.
func plainRun(r *rand.Rand, cols int) string {
	var b strings.Builder
	for range r.IntN(120) + 1 {
		n := r.IntN(2*cols + 3)
		switch r.IntN(4) {
		case 0:
			n = cols
		case 1:
			n = cols - 1
		}
		for i := range n {
			b.WriteByte(byte(0x20 + (i*7+n)%95))
		}
		b.WriteString([]string{"\r\n", "\n", "\n", "\r"}[r.IntN(4)])
	}
	if r.IntN(3) == 0 { // end mid-line, sometimes on the last column
		b.WriteString(strings.Repeat("z", r.IntN(cols+1)))
	}
	return b.String()
}

// TestFastForwardMatchesFullParse feeds the same seeded random streams to
// a screen that fast-forwards plain text and to one whose emulator reads
// every byte, in the same random chunks with resizes between them, and
// requires the same rendered frame (rows, cursor, buffer and serialized
// state, which holds every cell's attributes) after every chunk.
func TestFastForwardMatchesFullParse(t *testing.T) {
	skipped := 0
	for seed := range 300 {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		cols, rows := 2+r.IntN(90), 1+r.IntN(30)
		var stream strings.Builder
		for range 15 { // every state change is followed by plain text
			for range 1 + r.IntN(2) {
				tok := fastForwardTokens[r.IntN(len(fastForwardTokens))]
				for strings.Contains(tok, "%d") {
					tok = strings.Replace(tok, "%d", fmt.Sprint(r.IntN(rows+2)), 1)
				}
				stream.WriteString(tok)
			}
			stream.WriteString(plainRun(r, cols))
		}
		fast := newScreen(Terminal{Columns: cols, Rows: rows, Scrollback: 10})
		full := newScreen(Terminal{Columns: cols, Rows: rows, Scrollback: 10})
		full.front.fastForward = false
		data := []byte(stream.String())
		for i, chunk := 0, 0; i < len(data); chunk++ {
			n := min(len(data)-i, 1+r.IntN(6000))
			fast.write(data[i : i+n])
			full.write(data[i : i+n])
			i += n
			if r.IntN(8) == 0 {
				c, w := 2+r.IntN(90), 1+r.IntN(30)
				fast.resize(c, w)
				full.resize(c, w)
			}
			got, err1 := fast.snapshot()
			want, err2 := full.snapshot()
			if err1 != nil || err2 != nil {
				t.Fatalf("seed %d (%dx%d), chunk %d: the emulator failed (%v, %v) on %q", seed, cols, rows, chunk, err1, err2, data)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, chunk %d (bytes %d–%d of %q):\nfast-forwarded %+v\nfull parse     %+v",
					seed, chunk, i-n, i, data, got, want)
			}
		}
		skipped += fast.front.skipped
		fast.close()
		full.close()
	}
	if skipped == 0 {
		t.Fatal("no run was fast-forwarded: the test would not notice a wrong skip")
	}
	t.Logf("fast-forwarded %d bytes", skipped)
}

// TestFastForwardApplies checks the fast path is on for a command that
// prints many lines: it turns itself off when x/vt's fields it reads are
// renamed, and then this test fails instead of captures quietly slowing
// down.
func TestFastForwardApplies(t *testing.T) {
	if !vtState.ok {
		t.Fatal("x/vt's modes, charsets or scroll region fields were not found")
	}
	s := newScreen(Terminal{Columns: 80, Rows: 24, Scrollback: 1000})
	defer s.close()
	s.write([]byte(strings.Repeat("The quick brown fox jumps over the lazy dog\r\n", 1000)))
	if want := 44 * (1000 - 24 - 1); s.front.skipped < want {
		t.Fatalf("skipped %d bytes, want at least %d", s.front.skipped, want)
	}
	if got := snap(t, s).Lines[22]; strings.TrimRight(got, " ") != "The quick brown fox jumps over the lazy dog" {
		t.Fatalf("row 22 = %q", got)
	}
}

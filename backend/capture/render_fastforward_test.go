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
// longer than the screen is wide, some with SGR colours, ended by CR LF,
// LF or CR, sometimes then enough line feeds to scroll the last printed
// character away.
func plainRun(r *rand.Rand, cols, rows int) string {
	var b strings.Builder
	for range r.IntN(120) + 1 {
		n := r.IntN(2*cols + 3)
		switch r.IntN(4) {
		case 0:
			n = cols
		case 1:
			n = cols - 1
		}
		if r.IntN(3) == 0 { // colours, which a run of plain text may hold
			b.WriteString([]string{"\x1b[31m", "\x1b[44m", "\x1b[0m", "\x1b[m", "\x1b[1;4;7m", "\x1b[48;5;22m", "\x1b[38:2::1:2:3m", "\x1b[49m"}[r.IntN(8)])
		}
		for i := range n {
			b.WriteByte(byte(0x20 + (i*7+n)%95))
			if i == n/2 && r.IntN(5) == 0 {
				b.WriteString("\x1b[4" + fmt.Sprint(r.IntN(8)) + "m")
			}
		}
		b.WriteString([]string{"\r\n", "\n", "\n", "\r"}[r.IntN(4)])
	}
	if r.IntN(3) == 0 { // end mid-line, on the last column, or just after wrapping
		b.WriteString(strings.Repeat("z", []int{r.IntN(cols + 1), cols, cols + 1, 2*cols + 1}[r.IntN(4)]))
	}
	if r.IntN(4) == 0 { // the last character scrolls away with its row
		b.WriteString(strings.Repeat("\n", 2*rows+r.IntN(rows)))
	}
	return b.String()
}

// ffPair is a screen that fast-forwards plain text and one whose
// emulator reads every byte, fed the same writes and resizes.
type ffPair struct{ fast, full *screen }

func newFFPair(cols, rows int) ffPair {
	p := ffPair{newScreen(Terminal{Columns: cols, Rows: rows, Scrollback: 10}), newScreen(Terminal{Columns: cols, Rows: rows, Scrollback: 10})}
	p.full.front.fastForward = false
	return p
}

func (p ffPair) close() { p.fast.close(); p.full.close() }

// same requires the same rendered frame (rows, cursor, buffer and
// serialized state, which holds every cell's attributes) from both.
func (p ffPair) same(t *testing.T, where string) {
	t.Helper()
	got, err1 := p.fast.snapshot()
	want, err2 := p.full.snapshot()
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: the emulator failed (%v, %v)", where, err1, err2)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nfast-forwarded %+v\nfull parse     %+v", where, got, want)
	}
}

// TestFastForwardMatchesFullParse compares a fast-forwarding screen with
// one that reads every byte after every write: on hand-picked edge cases
// in one write and split in two, and on seeded random streams in random
// chunks with resizes between them.
func TestFastForwardMatchesFullParse(t *testing.T) {
	skipped := 0
	for _, c := range []struct {
		name       string
		cols, rows int
		data       string
	}{
		{"a character wraps, then its row scrolls away", 10, 3, strings.Repeat("z", 11) + strings.Repeat("\n", 7)},
		{"a character on the last column, then its row scrolls away", 10, 3, strings.Repeat("z", 10) + strings.Repeat("\n", 7)},
		{"wrapping characters scroll", 10, 3, strings.Repeat(strings.Repeat("a", 10)+strings.Repeat("b", 10), 6)},
		{"line feeds keep the column", 10, 3, strings.Repeat("abc\n", 20)},
		{"scrolled-in rows take the pen's background", 10, 3, "\x1b[44m" + strings.Repeat(strings.Repeat("x", 15)+"\n", 20)},
		{"the cursor starts mid-screen", 10, 4, "\x1b[2;5Hold\x1b[4;1Hbottom" + strings.Repeat("row\r\n", 9) + "end"},
		{"the background changes while rows scroll in", 10, 3, "\x1b[41m" + strings.Repeat("x\n\x1b[42my\n\x1b[0mz\n\x1b[44m", 8) + "end"},
		{"colours before the cut only", 10, 3, strings.Repeat("\x1b[1;3"+"1mred\x1b[0m\r\n", 8) + "\x1b[45m" + strings.Repeat("\r\n", 3) + strings.Repeat("plain\r\n", 5)},
		{"one row", 10, 1, strings.Repeat("line\r\n", 5) + "last"},
		{"one column", 1, 3, strings.Repeat("ab\r\n", 5)},
	} {
		data := []byte(c.data)
		for _, cut := range []int{len(data), len(data) / 2} {
			p := newFFPair(c.cols, c.rows)
			p.fast.write(data[:cut])
			p.full.write(data[:cut])
			p.same(t, fmt.Sprintf("%s (first %d bytes)", c.name, cut))
			p.fast.write(data[cut:])
			p.full.write(data[cut:])
			p.same(t, c.name)
			skipped += p.fast.front.skipped
			p.close()
		}
	}
	if skipped == 0 {
		t.Fatal("no edge case was fast-forwarded")
	}
	skipped = 0
	for seed := range 60 {
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
			stream.WriteString(plainRun(r, cols, rows))
		}
		p := newFFPair(cols, rows)
		data := []byte(stream.String())
		for i, chunk := 0, 0; i < len(data); chunk++ {
			n := min(len(data)-i, 1+r.IntN(6000))
			p.fast.write(data[i : i+n])
			p.full.write(data[i : i+n])
			i += n
			if r.IntN(8) == 0 {
				c, w := 2+r.IntN(90), 1+r.IntN(30)
				p.fast.resize(c, w)
				p.full.resize(c, w)
			}
			p.same(t, fmt.Sprintf("seed %d, chunk %d (bytes %d–%d of %q)", seed, chunk, i-n, i, data))
		}
		skipped += p.fast.front.skipped
		p.close()
	}
	if skipped == 0 {
		t.Fatal("no random run was fast-forwarded: the test would not notice a wrong skip")
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

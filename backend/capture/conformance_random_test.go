package capture

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomTokens are the pieces random streams are made of: text of every
// width class, C0 controls, CSI sequences with and without parameters,
// with intermediates and sub-parameters, C0 controls inside sequences,
// character sets (G0/G1, SO/SI), REP, scroll regions, the alternate
// screens, modes, tab stops, OSC and DCS strings, and malformed or
// cancelled sequences. %d is replaced by a small random number.
var randomTokens = []string{
	// text
	"abc", "x", "hello world ", "é", "e\u0301", "a\u0308\u0323", "日本", "語", "😀", "👍🏽", "\u2764\ufe0f", "\u0928\u094d", "a\u200db", "\xff", "\xe6\x97",
	// C0
	"\r", "\n", "\r\n", "\b", "\t", "\x07", "\x0b", "\x0c", "\x00", "\x7f",
	// cursor and editing
	"\x1b[%dA", "\x1b[%dB", "\x1b[%dC", "\x1b[%dD", "\x1b[%d;%dH", "\x1b[H", "\x1b[%dG", "\x1b[%dd", "\x1b[%dE", "\x1b[%dF",
	"\x1b[%d;%df", "\x1b[%da", "\x1b[%de", "\x1b[%d`", "\x1b[0;%da", "\x1b[%dI", "\x1b[%dZ",
	"\x1b[J", "\x1b[1J", "\x1b[2J", "\x1b[3J", "\x1b[K", "\x1b[1K", "\x1b[2K", "\x1b[?K", "\x1b[?2J",
	"\x1b[%dX", "\x1b[%d@", "\x1b[%dP", "\x1b[%dL", "\x1b[%dM", "\x1b[%dS", "\x1b[%dT",
	// scroll regions, index, saved cursor
	"\x1b[%d;%dr", "\x1b[r", "\x1b[;%dr", "\x1b[%dr", "\x1bM", "\x1bD", "\x1bE", "\x1b7", "\x1b8", "\x1b[s", "\x1b[u", "\x1b[?6h", "\x1b[?6l",
	// buffers and modes
	"\x1b[?1049h", "\x1b[?1049l", "\x1b[?47h", "\x1b[?47l", "\x1b[?1047h", "\x1b[?1047l", "\x1b[?1048h", "\x1b[?1048l",
	"\x1b[?25l", "\x1b[?25h", "\x1b[4h", "\x1b[4l", "\x1b[?7l", "\x1b[?7h", "\x1b[20h", "\x1b[20l", "\x1b[?1h", "\x1b[?2004h",
	// REP, tabs
	"\x1b[%db", "\x1b[b", "\x1b[3g", "\x1b[g", "\x1bH",
	// SGR, with sub-parameters
	"\x1b[1;31m", "\x1b[0m", "\x1b[38;5;%dm", "\x1b[48;2;%d;%d;%dm", "\x1b[7m", "\x1b[44m", "\x1b[m", "\x1b[4:3m", "\x1b[38:2::%d:%d:%dm",
	"\x1b[58:5:%dm", "\x1b[1;2;3;4;5;7;8;9m", "\x1b[22;23;24;25;27;28;29m", "\x1b[%d;%d;%dm",
	// intermediates and private markers
	"\x1b[!p", "\x1b[ %dq", "\x1b[!47h", "\x1b[>c", "\x1b[>%d;%dm", "\x1b[?1$p", "\x1b[%d\"q", "\x1b[%d'}", "\x1b[=%dc", "\x1b[%d*x",
	// sub-parameters where they mean nothing
	"\x1b[:%dr", "\x1b[%d:%dH", "\x1b[1:2;3r", "\x1b[%d:%dA",
	// C0 inside sequences, cancelled and broken sequences
	"\x1b[%d\n;%dH", "\x1b[3\bC", "\x1b[\r%dD", "\x1b[%d\x18", "\x1b[%d\x1a", "\x1b[1;\x1b[2J", "\x1b\x1b[H", "\x1b[999999999999C", "\x1b[%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%dm",
	// character sets
	"\x1b(0lqk\x1b(B", "\x1b)0\x0eabc\x0f", "\x1b(A#", "\x1b(0", "\x1b(B", "\x0e", "\x0f", "\x1b*0\x1bn", "\x1bo", "\x1b(K{", "\x1b#8", "\x1b#3",
	// strings
	"\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "\x1bPq#0;1;1;1#0~-\x1b\\", "\x1b_apc\x1b\\", "\x1b^pm\x1b\\", "\x1b]52;c;YQ==\x07",
	// ESC finals
	"\x1bc", "\x1b=", "\x1b>", "\x1bN", "\x1bZ", "\x1b[c", "\x1b[6n", "\x1b[5n",
}

// randomStream builds a stream of n tokens from r.
func randomStream(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		tok := randomTokens[r.IntN(len(randomTokens))]
		for strings.Contains(tok, "%d") {
			tok = strings.Replace(tok, "%d", fmt.Sprint(r.IntN(12)), 1)
		}
		b.WriteString(tok)
	}
	return b.String()
}

// knownRandom lists the random streams whose serialized_state cannot
// restore the screen, with why. A listed stream that starts to restore
// fails the test, so the list stays true.
var knownRandom = map[string]string{
	"random 235":  wideCut,
	"random 1301": wideCut,
	"random 1871": wideCut,
}

// wideCut: after the terminal narrowed, xterm.js keeps a row longer than
// the terminal, with a wide character cut by the right edge; no output
// can put a wide character in the last column (xterm.js wraps it or, with
// autowrap off, drops it), so no state restores that row.
const wideCut = "a wide character cut by the right edge after the terminal narrowed: no output puts a wide character in the last column"

// TestRenderConformanceRandom runs 2,000 seeded random streams
// (randomTokens, a third of them resized in the middle) through
// conformance. The seed is fixed, so a failure is reproducible: the
// failing stream is printed as a Go string to add to the corpus.
func TestRenderConformanceRandom(t *testing.T) {
	const streams = 2000
	r := rand.New(rand.NewPCG(6, 40))
	names := make([]string, streams)
	runs := make([]helperRun, streams)
	for i := range runs {
		run := helperRun{Columns: 1 + r.IntN(20), Rows: 1 + r.IntN(8)}
		run.Parts = splitParts([]byte(randomStream(r, 5+r.IntN(40))), i)
		if r.IntN(3) == 0 {
			run.Resize = &xtermSize{Columns: 1 + r.IntN(20), Rows: 1 + r.IntN(8)}
			run.Then = []byte(randomStream(r, 1+r.IntN(10)))
		}
		names[i], runs[i] = fmt.Sprint("random ", i), run
	}
	n, matched, restored, threw := conformance(t, names, runs, knownRandom)
	t.Logf("random streams vs @xterm/headless: %d/%d rendered frames match, serialized_state restores %d/%d; xterm.js threw on %d (the renderer failed on those too)",
		matched, n-threw, restored, n-threw, threw)
}

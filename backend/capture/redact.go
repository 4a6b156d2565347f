package capture

import (
	"slices"
	"sort"
	"strings"
)

// Redaction of secrets shown split: a raw chunk can show a secret split by
// escape sequences (restyled, or moved over), and a rendered frame's rows
// and its serialized state are not one stream of text, so a secret the
// output composed on the screen is no literal the normalizer's replacer
// can find.

// redactScreen redacts, in place, the secrets f's rows and serialized
// state show: within one row, continued from one row onto the next
// (redactRows), or split by escape sequences (redactSplit). The stream
// the screen renders is already redacted, so a screen shows a secret only
// when the output composed it from pieces written apart. It reports
// whether it changed anything.
func (n *normalizer) redactScreen(f *RenderedFrame) bool {
	if len(n.secrets) == 0 && n.redact == nil {
		return false
	}
	changed := false
	before := slices.Clone(f.Lines)
	n.redactRows(f.Lines)
	for i, l := range f.Lines {
		f.Lines[i] = n.redactWhole(l)
		changed = changed || f.Lines[i] != before[i]
	}
	state := n.redactWhole(n.redactSplit(f.SerializedState))
	changed = changed || state != f.SerializedState
	f.SerializedState = state
	return changed
}

// redactWhole replaces the secrets s holds whole (and the replay
// machine's, n.redact).
func (n *normalizer) redactWhole(s string) string {
	if n.redact != nil {
		s = n.redact(s)
	}
	for _, secret := range n.secrets {
		if strings.Contains(s, secret) {
			return n.secretReplacer.Replace(s)
		}
	}
	return s
}

// redactRows redacts, in place, the secrets a screen shows across the end
// of one row and the start of the next (as wrapped text is): each row's
// share of such a secret becomes RedactedSecret. A secret within one row
// is left to text, which replaces it like any recorded text.
func (n *normalizer) redactRows(rows []string) {
	if len(n.secrets) == 0 || len(rows) < 2 {
		return
	}
	joined := strings.Join(rows, "")
	starts := make([]int, len(rows)+1) // byte offset of each row in joined
	for i, r := range rows {
		starts[i+1] = starts[i] + len(r)
	}
	rowOf := func(off int) int { return sort.SearchInts(starts, off+1) - 1 }
	spans := make([][][2]int, len(rows)) // per row: [from, to) in row bytes
	for _, secret := range n.secrets {
		for i := 0; ; {
			k := strings.Index(joined[i:], secret)
			if k < 0 {
				break
			}
			a, b := i+k, i+k+len(secret)
			if first, last := rowOf(a), rowOf(b-1); first != last {
				for r := first; r <= last; r++ {
					spans[r] = append(spans[r], [2]int{max(a, starts[r]) - starts[r], min(b, starts[r+1]) - starts[r]})
				}
			}
			i = a + 1
		}
	}
	for r, sp := range spans {
		rows[r] = replaceSpans(rows[r], sp)
	}
}

// redactSplit redacts the secrets s shows split by escape sequences, CR
// or LF (as a serialized screen shows a wrapped or restyled secret): each
// visible piece of such a secret becomes RedactedSecret. A secret shown
// whole is left to text. It over-redacts rather than under-redacts: text
// that only looks like a secret once the escapes are removed is redacted
// too.
func (n *normalizer) redactSplit(s string) string {
	if len(n.secrets) == 0 || !n.maySplit(s) {
		return s
	}
	return n.redactSplitAll(s)
}

// maySplit reports whether s may show a secret split (redactSplit) without
// copying s, since every raw chunk passes here: the first piece of a split
// secret is a proper prefix of it that ends right before a CR, an LF or an
// ESC (what redactSplit skips), and the first visible byte after what is
// skipped there continues it; s shows none unless both hold somewhere. A
// secret longer than maxScannedSecret is not looked for here (the answer
// is then yes), which bounds the scan.
func (n *normalizer) maySplit(s string) bool {
	for i := strings.IndexAny(s, "\x1b\r\n"); i >= 0; {
		next := i // the first visible byte after the skipped run at i
		for next < len(s) && (s[next] == '\r' || s[next] == '\n' || s[next] == 0x1b) {
			if s[next] == 0x1b {
				next = skipEscape(s, next)
			} else {
				next++
			}
		}
		if next == len(s) {
			return false
		}
		for _, secret := range n.secrets {
			if len(secret) > maxScannedSecret {
				return true
			}
			for j := i - 1; j >= 0 && j > i-len(secret); j-- {
				if s[j] == secret[0] && s[j:i] == secret[:i-j] && s[next] == secret[i-j] {
					return true
				}
			}
		}
		k := strings.IndexAny(s[next:], "\x1b\r\n")
		if k < 0 {
			break
		}
		i = next + k
	}
	return false
}

// maxScannedSecret bounds the secrets maySplit looks for.
const maxScannedSecret = 256

// redactSplitAll is redactSplit without maySplit's shortcut.
func (n *normalizer) redactSplitAll(s string) string {
	visible := make([]byte, 0, len(s))
	at := make([]int, 0, len(s)) // offset in s of each visible byte
	for i := 0; i < len(s); {
		switch s[i] {
		case '\r', '\n':
			i++
		case 0x1b:
			i = skipEscape(s, i)
		default:
			visible, at = append(visible, s[i]), append(at, i)
			i++
		}
	}
	vis := string(visible)
	var spans [][2]int // byte ranges of s to replace
	for _, secret := range n.secrets {
		for k := 0; ; {
			j := strings.Index(vis[k:], secret)
			if j < 0 {
				break
			}
			a, b := k+j, k+j+len(secret)
			if at[b-1]-at[a] != len(secret)-1 { // split: one span per contiguous piece
				from := a
				for x := a + 1; x <= b; x++ {
					if x == b || at[x] != at[x-1]+1 {
						spans = append(spans, [2]int{at[from], at[x-1] + 1})
						from = x
					}
				}
			}
			k = a + 1
		}
	}
	return replaceSpans(s, spans)
}

// replaceSpans returns s with each byte range [from, to) of spans
// replaced by RedactedSecret; a range starting inside an earlier one
// extends that one's placeholder instead of adding another.
func replaceSpans(s string, spans [][2]int) string {
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var out strings.Builder
	pos := 0
	for _, sp := range spans {
		if sp[1] <= pos {
			continue
		}
		if sp[0] >= pos {
			out.WriteString(s[pos:sp[0]])
			out.WriteString(RedactedSecret)
		}
		pos = sp[1]
	}
	out.WriteString(s[pos:])
	return out.String()
}

// skipEscape returns the offset just past the escape sequence at s[i]
// (an ESC): a CSI sequence, a string sequence (OSC, DCS, APC, PM, SOS)
// up to BEL or ST, a character set designation, or ESC and one byte.
func skipEscape(s string, i int) int {
	if i+1 >= len(s) {
		return len(s)
	}
	switch c := s[i+1]; c {
	case '[':
		j := i + 2
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f {
			j++
		}
		return min(j+1, len(s))
	case ']', 'P', '_', '^', 'X':
		for j := i + 2; j < len(s); j++ {
			if s[j] == 0x07 {
				return j + 1
			}
			if s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\' {
				return j + 2
			}
		}
		return len(s)
	case '(', ')', '*', '+', '-', '.', '/', '#', '%':
		return min(i+3, len(s))
	default:
		return i + 2
	}
}

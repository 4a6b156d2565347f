package capture

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Placeholders of path normalization.
const (
	PlaceholderTemporaryRoot    = "<temporary-root>"
	PlaceholderWorkingDirectory = "<working-directory>"
	PlaceholderExecutable       = "<executable>"
	PlaceholderPID              = "<pid>"
)

// normalizer rewrites recorded text: secret values and sensitive input
// first (always, as RedactedSecret), then
// the capture's paths (when normalization.paths), then known pids (when
// normalization.pids), then the scenario's patterns in order; and buckets
// recorded times.
type normalizer struct {
	literals []string // secrets then paths: what a chunk boundary must not split
	secrets  []string // secretValues, longest first
	replacer *strings.Replacer
	pairs    []string            // the replacer's pairs (addLoopbackPort adds to them)
	redact   func(string) string // replay machine secrets, first (backend/loopback); may be nil
	pids     bool
	pidSet   map[int]int // real pid → its ordinal (1 for the first recorded process)
	pidRE    *regexp.Regexp
	pidTexts []string // the pids of pidRE in decimal
	patterns []*regexp.Regexp
	replace  []string
	bucket   int

	// secretReplacer replaces the secrets alone (redactWhole).
	secretReplacer *strings.Replacer
}

// newNormalizer prepares the normalization of sc for a run whose
// temporary root is tempRoot. With paths normalization on, the resolved
// paths of tg (what the capture executes and enters) get the same
// placeholders as the paths written in sc. Pattern compilation cannot
// fail for a parsed scenario; the error covers hand-built ones.
func newNormalizer(sc *Scenario, tempRoot string, tg ...target) (*normalizer, error) {
	n := &normalizer{pids: sc.Normalization.PIDs, pidSet: map[int]int{}, bucket: max(sc.Normalization.TimeBucketMS, 1)}
	var pairs []string
	n.secrets = secretValues(sc)
	for _, s := range n.secrets {
		pairs = append(pairs, s, RedactedSecret)
	}
	n.secretReplacer = strings.NewReplacer(pairs...)
	if sc.Normalization.Paths {
		paths := map[string]string{
			tempRoot: PlaceholderTemporaryRoot, sc.WorkingDirectory: PlaceholderWorkingDirectory, sc.Executable: PlaceholderExecutable,
		}
		for _, t := range tg {
			paths[t.dir], paths[t.executable] = PlaceholderWorkingDirectory, PlaceholderExecutable
			for i, root := range t.roots {
				paths[root] = fmt.Sprintf("<filesystem-root-%d>", i)
			}
		}
		for i, root := range sc.FilesystemRoots {
			paths[root] = fmt.Sprintf("<filesystem-root-%d>", i)
		}
		var keys []string
		for p := range paths {
			if p != "" && p != "/" {
				keys = append(keys, p)
			}
		}
		sortLongestFirst(keys)
		for _, p := range keys {
			pairs = append(pairs, p, paths[p])
		}
	}
	for i := 0; i < len(pairs); i += 2 {
		n.literals = append(n.literals, pairs[i])
	}
	n.replacer = strings.NewReplacer(pairs...)
	n.pairs = pairs
	for _, p := range sc.Normalization.Patterns {
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			return nil, fmt.Errorf("capture: normalization pattern %q: %w", p.Pattern, err)
		}
		n.patterns = append(n.patterns, re)
		n.replace = append(n.replace, p.Replacement)
	}
	return n, nil
}

// secretValues is what is replaced by RedactedSecret wherever it is
// recorded, longest first: the values of the secret aliases and the lines
// of sensitive input. The terminal echoes typed input line by line (a CR
// comes back as CRLF), so sensitive input is split at CR and LF: each
// non-empty line is a secret of its own.
func secretValues(sc *Scenario) []string {
	var secrets []string
	for _, alias := range sc.SecretAliases {
		if v := sc.Environment[alias]; v != "" {
			secrets = append(secrets, v)
		}
	}
	for _, e := range sc.Events {
		if e.Type != EventInput || !e.Sensitive {
			continue
		}
		for _, line := range strings.FieldsFunc(e.Data, func(r rune) bool { return r == '\r' || r == '\n' }) {
			if !slices.Contains(secrets, line) {
				secrets = append(secrets, line)
			}
		}
	}
	for _, line := range reactiveSensitiveLines(sc) { // reactive_parse.go
		if !slices.Contains(secrets, line) {
			secrets = append(secrets, line)
		}
	}
	sortLongestFirst(secrets)
	return secrets
}

func sortLongestFirst(s []string) {
	sort.Slice(s, func(i, j int) bool {
		if len(s[i]) != len(s[j]) {
			return len(s[i]) > len(s[j])
		}
		return s[i] < s[j]
	})
}

// addPID makes pid one of the numbers replaced by <pid> and gives it the
// next ordinal.
func (n *normalizer) addPID(pid int) {
	if !n.pids || pid <= 0 || n.pidSet[pid] != 0 {
		return
	}
	n.pidSet[pid] = len(n.pidSet) + 1
	alts := make([]string, 0, len(n.pidSet))
	for p := range n.pidSet {
		alts = append(alts, strconv.Itoa(p))
	}
	sortLongestFirst(alts)
	n.pidRE = regexp.MustCompile(`\b(?:` + strings.Join(alts, "|") + `)\b`)
	n.pidTexts = alts
}

// pidNumber is how a pid field is recorded: unchanged without pid
// normalization; otherwise the ordinal addPID gave it, or 0 for a process
// the capture never recorded (such as the root's parent). Real pids differ
// on every run; ordinals in order of first recording keep the tree's shape
// comparable across runs.
func (n *normalizer) pidNumber(pid int) int {
	if !n.pids {
		return pid
	}
	return n.pidSet[pid]
}

// maybePID reports whether s could hold one of the pids: the regular
// expression (slow, with its word boundaries) runs only when one of them
// occurs at all. Past a few pids the expression is cheaper than the scans.
func (n *normalizer) maybePID(s string) bool {
	if len(n.pidTexts) > 16 {
		return true
	}
	for _, p := range n.pidTexts {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// text normalizes one piece of recorded text.
func (n *normalizer) text(s string) string {
	// ToValidUTF8 and the replacer copy their input even when nothing
	// changes (the replacer always does): megabytes of output are looked
	// through first, which costs a fraction of a copy.
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if n.redact != nil {
		s = n.redact(s)
	}
	if n.holdsLiteral(s) {
		s = n.replacer.Replace(s)
	}
	if n.pidRE != nil && n.maybePID(s) {
		s = n.replacePIDs(s)
	}
	for i, re := range n.patterns {
		s = re.ReplaceAllLiteralString(s, n.replace[i])
	}
	return s
}

// holdsLiteral reports whether s contains one of the replacer's literals.
func (n *normalizer) holdsLiteral(s string) bool {
	for i := 0; i < len(n.pairs); i += 2 {
		if strings.Contains(s, n.pairs[i]) {
			return true
		}
	}
	return false
}

// replacePIDs replaces the known pids in s, but never inside a terminal
// control sequence: the digits of "\x1b[23H" or "\x1b[38;5;123m" are
// parameters, not pids, however small the pids (in a container they can
// be). Sequences are found with charmbracelet/x/ansi, the parser family
// of the emulator, and only where an ESC occurs, so plain text costs
// nothing extra. Text on each side of a sequence is matched on its own,
// so a pid printed right after an SGR sequence is still a whole word.
func (n *normalizer) replacePIDs(s string) string {
	i := strings.IndexByte(s, 0x1b)
	if i < 0 {
		return n.pidRE.ReplaceAllLiteralString(s, PlaceholderPID)
	}
	var b strings.Builder
	for i >= 0 {
		b.WriteString(n.pidRE.ReplaceAllLiteralString(s[:i], PlaceholderPID))
		_, _, k, _ := ansi.DecodeSequence(s[i:], ansi.NormalState, nil)
		if k <= 0 {
			k = 1
		}
		b.WriteString(s[i : i+k])
		s = s[i+k:]
		i = strings.IndexByte(s, 0x1b)
	}
	b.WriteString(n.pidRE.ReplaceAllLiteralString(s, PlaceholderPID))
	return b.String()
}

// ms buckets a recorded time down to a multiple of time_bucket_ms.
func (n *normalizer) ms(v int) int { return v - v%n.bucket }

// stream turns PTY chunks into text without splitting a UTF-8 sequence or
// a literal the normalizer replaces: it holds back the longest tail that
// could still become one, and emits it with the next chunk or at flush.
type stream struct {
	literals []string
	pending  []byte
}

// push adds a chunk and returns the text that is safe to normalize now.
//
// A chunk that follows nothing held back is read in place, and what is
// held back is kept in a small buffer, so a chunk of megabytes is copied
// once (into the text), not twice, and no buffer of its size is kept.
func (s *stream) push(b []byte) string {
	buf := b
	if len(s.pending) > 0 {
		buf = append(s.pending, b...)
	}
	keep := max(incompleteRune(buf), s.literalPrefix(buf))
	out := string(buf[:len(buf)-keep])
	if cap(s.pending) > 64<<10 {
		s.pending = nil
	}
	s.pending = append(s.pending[:0], buf[len(buf)-keep:]...)
	return out
}

// flush returns whatever is still held back.
func (s *stream) flush() string {
	out := string(s.pending)
	s.pending = s.pending[:0]
	return out
}

// literalPrefix is the length of the longest tail of pending that is a
// proper prefix of a literal.
func (s *stream) literalPrefix(pending []byte) int {
	best := 0
	for _, lit := range s.literals {
		for k := min(len(lit)-1, len(pending)); k > best; k-- {
			if string(pending[len(pending)-k:]) == lit[:k] {
				best = k
				break
			}
		}
	}
	return best
}

// incompleteRune is the length of an unfinished UTF-8 sequence at the end
// of b (0 when b ends on a rune boundary or with invalid bytes).
func incompleteRune(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if utf8.RuneStart(c) {
			if c >= 0xC0 && !utf8.FullRune(b[len(b)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}

package app

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Untrusted text (bundle names, descriptions, keys, paths; agent names and
// invocation strings) is shown to people with its control, bidirectional
// and invisible characters made visible, never interpreted
// (docs/untrusted-text.md). This file is the one owner of that
// rule on the Go side; the web UI applies the same set in
// frontend/src/lib/visible.ts.

// hiddenRune reports whether r would act on a terminal or change how
// surrounding text reads without being seen: C0/C1 controls (escape
// sequences), format characters (bidirectional marks, embeddings,
// overrides and isolates, zero-width space/joiners, word joiner, BOM, tag
// characters), line/paragraph separators, and the blank fillers that
// render as nothing (combining grapheme joiner, Hangul fillers).
func hiddenRune(r rune) bool {
	switch {
	case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
		return true
	case r == 0x2028, r == 0x2029, r == 0x034F, r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0:
		return true
	}
	return false
}

// makeVisible writes s with every hidden rune as ⟨U+XXXX⟩ and every byte
// that is not UTF-8 as ⟨0xNN⟩; keep decides which hidden runes stay.
func makeVisible(s string, keep func(rune) bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "⟨0x%02X⟩", s[i])
		case hiddenRune(r) && !keep(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// visibleText makes untrusted multi-line text safe to print: newline and
// tab are kept, every other hidden character is shown as ⟨U+XXXX⟩.
func visibleText(s string) string {
	return makeVisible(s, func(r rune) bool { return r == '\n' || r == '\t' })
}

// visibleLine makes untrusted text safe to print on one line or in a
// table cell: every hidden character, newline and tab included, is shown.
func visibleLine(s string) string {
	return makeVisible(s, func(rune) bool { return false })
}

package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// checkPlainText fails unless plainText writes s exactly as json.Encoder
// (SetEscapeHTML(false)) writes it.
func checkPlainText(t *testing.T, s string) {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	e := recordWriter{w: bufio.NewWriter(&got)}
	e.plainText(s)
	e.w.Flush()
	if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got.Bytes(), w) {
		t.Fatalf("plainText(%q) = %s, encoding/json %s", s, got.Bytes(), w)
	}
}

// TestPlainText: every byte value alone and after a run of plain bytes
// longer than a word, and the characters encoding/json treats apart.
func TestPlainText(t *testing.T) {
	for c := 0; c < 256; c++ {
		checkPlainText(t, string(rune(c)))
		checkPlainText(t, string([]byte{byte(c)}))
		checkPlainText(t, strings.Repeat("plain ", 3)+string([]byte{byte(c)})+"tail")
	}
	for _, s := range []string{"", "\u2028\u2029", "a\u2028b", "\xe2\x80", "\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xaa", "😀\xf0\x9f", "\xed\xa0\x80",
		"<&>", "\x7f\x1b[0m\r\n\t\b\f\"\\/", "\ufffd\xff\xfe", strings.Repeat("é", 40)} {
		checkPlainText(t, s)
	}
}

func FuzzPlainText(f *testing.F) {
	for _, s := range []string{"plain", "a\x1b[31mb<&>\u2028\n", "\xff\xfe x", "\"\\\x00\x1f😀\xf0\x9f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkPlainText(t, s) })
}

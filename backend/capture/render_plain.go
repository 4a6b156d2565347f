package capture

// plainPrefix is the length of text's longest prefix of plain bytes:
// printable ASCII (0x20–0x7e), LF and CR, the only bytes a run of the
// fast-forward may hold (render_fastforward.go), which finds where a run
// ends with it. Every output message carries it too ('w', helper.mjs),
// and the helper refuses output inside a run that is not all plain: in
// Go the scan is a few milliseconds for 10 MB, in the helper it cost a
// latin1 string of every message and a regular expression over it.
//
// It is a byte-class fact computed by the capture over exactly the bytes
// it sends, never read from the output; FuzzPlainPrefix holds it to the
// byte-by-byte definition (isPlainByte).
//
// Hand-written (no library finds the first byte outside a set): eight
// bytes are tested at a time with the word-parallel "some byte is below
// n" and "some byte is above n" tests, and a word holding a byte outside
// 0x20–0x7e (an LF or CR too) is looked at byte by byte.
func plainPrefix(text string) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(text); i += 8 {
		w := text[i : i+8] // one bounds check for the eight loads
		v := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		below := (v - ones*0x20) & ^v & highs        // some byte < 0x20
		above := ((v + ones*(127-0x7e)) | v) & highs // some byte > 0x7e
		if below|above == 0 {
			continue
		}
		for j := i; j < i+8; j++ {
			if !isPlainByte(text[j]) {
				return j
			}
		}
	}
	for ; i < len(text); i++ {
		if !isPlainByte(text[i]) {
			return i
		}
	}
	return len(text)
}

// isPlainByte reports whether b may be part of a fast-forward run:
// printable ASCII, LF or CR.
func isPlainByte(b byte) bool {
	return (b >= 0x20 && b <= 0x7e) || b == '\n' || b == '\r'
}

package strictjson

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// PlainEnd returns the index of the first byte of s at or after i that is
// not plain: plain bytes are printable ASCII (0x20–0x7F) other than '"'
// and '\\', the bytes every JSON reader and writer here treats as
// themselves inside a string (nothing to unescape, check or escape). It
// returns len(s) when every byte from i on is plain.
//
// Why hand-written: the string loops of the readers and writers here
// (the canonicalizer, the strict decoder, the record's checks and
// encoding) spend most of a 10 MB capture record's time on these bytes.
// PlainEnd tests eight bytes at once with the word tricks of "Bit
// Twiddling Hacks" (a byte below 0x20, equal to '"' or '\\', or with its
// high bit set); the lowest byte each test flags is exact, because the
// borrows of the subtractions only run upward. TestPlainEnd and
// FuzzPlainEnd check it against the byte-at-a-time definition.
func PlainEnd(s []byte, i int) int {
	for ; i+16 <= len(s); i += 16 {
		if notPlain(binary.LittleEndian.Uint64(s[i:]))|notPlain(binary.LittleEndian.Uint64(s[i+8:])) != 0 {
			break
		}
	}
	for ; i+8 <= len(s); i += 8 {
		if m := notPlain(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(s); i++ {
		if !IsPlain(s[i]) {
			return i
		}
	}
	return i
}

// PlainEndString is PlainEnd of a string. It reads s's bytes in place
// (unsafe.Slice over them, never written), so no copy is made.
func PlainEndString(s string, i int) int {
	return PlainEnd(unsafe.Slice(unsafe.StringData(s), len(s)), i)
}

// notPlain has the high bit of each byte of the little-endian word x set
// where that byte is not plain, and of no byte below the first such one.
func notPlain(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := x^(ones*'"'), x^(ones*'\\')
	return (x | (x-ones*0x20)&^x | (q-ones)&^q | (b-ones)&^b) & highs
}

// IsPlain reports whether c is a plain byte (PlainEnd).
func IsPlain(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }

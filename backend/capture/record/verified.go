package record

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// Verified is the proof that a capture record passed Verify: it holds the
// very bytes that were verified, so whoever reads the record from it reads
// what was checked and nothing else.
//
// Only Check makes a Verified whose Valid is true. Its one field is
// unexported, so another package can make only the zero Verified, which
// holds no record: Valid reports false and JSON returns "". The bytes are
// Check's own copy, taken before Verify ran, and kept as a Go string,
// which nothing can change: changing the caller's slice afterwards (or
// while Verify runs) changes neither what was verified nor what a reader
// of the Verified gets. Hand a Verified to code that would otherwise
// verify the record again (compare.NewCapture), so that every record is
// verified once where its bytes enter.
//
// A Verified is safe for concurrent use and cheap to copy (one pointer).
type Verified struct{ r *verified }

type verified struct{ data string }

// Check verifies raw with Verify and returns the proof of it: a Verified
// holding a copy of raw when Verify reports no issue, the zero Verified
// and every issue otherwise. Its issues are exactly Verify's.
func Check(raw json.RawMessage) (Verified, []Issue) {
	own := bytes.Clone(raw) // the copy that is verified and kept
	if issues := Verify(own); len(issues) > 0 {
		return Verified{}, issues
	}
	if len(own) == 0 {
		return Verified{}, []Issue{{Path: "$", Code: CodeInvalidJSON, Message: "the record is empty"}} // Verify refuses it first
	}
	// Why unsafe: the kept bytes must be immutable, and converting own to
	// a string would copy a record of up to 64 MiB a second time. Once
	// Verify has returned nothing else holds own (Verify only reads it and
	// keeps no reference), and own is never written again, so viewing its
	// memory as a string is what strings.Builder does.
	return Verified{&verified{data: unsafe.String(unsafe.SliceData(own), len(own))}}, nil
}

// Valid reports whether v was made by Check from a record that passed
// Verify; the zero Verified is not valid.
func (v Verified) Valid() bool { return v.r != nil }

// JSON returns the exact bytes of the verified record ("" for the zero
// Verified). The string is v's own: it cannot be changed by anyone.
func (v Verified) JSON() string {
	if v.r == nil {
		return ""
	}
	return v.r.data
}

// Holds reports whether raw is byte for byte the record v verified (false
// for the zero Verified), so that a caller can tell whether a proof
// belongs to a record it was handed alongside it.
func (v Verified) Holds(raw []byte) bool {
	return v.r != nil && string(raw) == v.r.data
}

// Package evidence holds Gatehouse's integrity primitives: RFC 8785 canonical
// JSON and SHA-256 digests over it, commitments to JSON values, and the
// strict Evidence v2 envelope with its content-derived evidence_id.
//
// Canonicalization produces exactly the bytes of github.com/gowebpki/jcs, an
// RFC 8785 implementation that rejects duplicate object names, invalid
// UTF-8, lone surrogates and numbers outside the IEEE-754 double range, and
// refuses exactly what it refuses; it runs in one linear pass of its own
// (canonical_fast.go says why) and is tested against jcs.Transform. Nothing in this
// package keeps mutable package-level state; every function is safe for
// concurrent use.
package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Canonicalize returns the RFC 8785 (JSON Canonicalization Scheme) form of
// the single JSON value in jsonBytes: object members sorted by their UTF-16
// code units, no insignificant whitespace, minimal string escaping (so "<",
// ">" and "&" stay literal) and numbers in their ECMAScript shortest
// round-trip form (1E21 → 1e+21, -0 → 0, 4.50 → 4.5). It fails, and returns
// no output, for anything that is not exactly one well-formed JSON value,
// for duplicate object names, invalid UTF-8, unpaired surrogate escapes and
// numbers that do not fit an IEEE-754 double. Like RFC 8785 itself it
// represents every number as a double, so integers beyond 2^53 are rounded;
// Parse refuses such numbers inside an Envelope. Input beyond 1 GiB is
// refused (Parse admits far less). Canonicalize is idempotent:
// Canonicalize(Canonicalize(x)) equals Canonicalize(x).
func Canonicalize(jsonBytes []byte) ([]byte, error) {
	out, err := canonicalize(jsonBytes)
	if err != nil {
		return nil, fmt.Errorf("evidence: canonicalize JSON (RFC 8785): %w", err)
	}
	return out, nil
}

// CheckCanonical reports whether Canonicalize accepts jsonBytes, with
// the error Canonicalize would return, without writing the canonical form
// (a reader that only needs to know a 10 MB record canonicalizes saves
// that copy).
func CheckCanonical(jsonBytes []byte) error {
	if err := canonicalCheck(jsonBytes); err != nil {
		return fmt.Errorf("evidence: canonicalize JSON (RFC 8785): %w", err)
	}
	return nil
}

// DigestJSON returns the lowercase hexadecimal SHA-256 of the RFC 8785
// canonical form of raw, a single JSON value. Two inputs that differ only in
// member order, whitespace, escaping or number spelling have the same digest.
// It fails exactly when Canonicalize fails.
func DigestJSON(raw []byte) (string, error) {
	canonical, err := Canonicalize(raw)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:]), nil
}

// Digest returns hex(SHA-256(JCS(json.Marshal(v)))), the commitment digest
// of the JSON encoding of v as defined in docs/formats/capture-record.md. The value is
// first encoded with encoding/json (so struct tags, MarshalJSON methods and
// json.RawMessage apply, and invalid UTF-8 in Go strings becomes U+FFFD as
// encoding/json does), then canonicalized; the digest therefore never depends
// on map iteration order, struct field order or encoding/json's HTML
// escaping.
func Digest(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("evidence: digest: encode %T as JSON: %w", v, err)
	}
	return DigestJSON(raw)
}

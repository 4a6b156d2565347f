package evidence

import (
	"errors"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// AlgorithmSHA256 is the only commitment algorithm: SHA-256 over the RFC 8785
// canonical JSON form of the committed value.
const AlgorithmSHA256 = "sha256"

// ErrCommitmentMismatch reports that a value does not match a commitment.
// Verify and VerifyJSON wrap it, so callers test with errors.Is.
var ErrCommitmentMismatch = errors.New("commitment mismatch")

// Commitment binds a JSON value by the digest of its canonical form. A
// well-formed Commitment has Algorithm "sha256" and a Digest of exactly 64
// lowercase hexadecimal characters.
type Commitment struct {
	Algorithm string `json:"algorithm"`
	Digest    string `json:"digest"`
}

// Commit returns the SHA-256 commitment to the JSON encoding of v (see
// Digest). Equal JSON values commit identically whatever their member order.
func Commit(v any) (Commitment, error) {
	d, err := Digest(v)
	if err != nil {
		return Commitment{}, fmt.Errorf("evidence: commit: %w", err)
	}
	return Commitment{Algorithm: AlgorithmSHA256, Digest: d}, nil
}

// CommitJSON returns the SHA-256 commitment to the single JSON value raw.
func CommitJSON(raw []byte) (Commitment, error) {
	d, err := DigestJSON(raw)
	if err != nil {
		return Commitment{}, fmt.Errorf("evidence: commit: %w", err)
	}
	return Commitment{Algorithm: AlgorithmSHA256, Digest: d}, nil
}

// Verify returns nil exactly when c is a well-formed commitment and the JSON
// encoding of v canonicalizes to a value with digest c.Digest. A malformed
// commitment or an unencodable value is an error that does not wrap
// ErrCommitmentMismatch; a well-formed commitment to a different value wraps
// ErrCommitmentMismatch.
func Verify(v any, c Commitment) error {
	if err := c.check(); err != nil {
		return err
	}
	d, err := Digest(v)
	if err != nil {
		return fmt.Errorf("evidence: verify commitment: %w", err)
	}
	return c.compare(d)
}

// VerifyJSON is Verify for a JSON value given as bytes.
func VerifyJSON(raw []byte, c Commitment) error {
	if err := c.check(); err != nil {
		return err
	}
	d, err := DigestJSON(raw)
	if err != nil {
		return fmt.Errorf("evidence: verify commitment: %w", err)
	}
	return c.compare(d)
}

func (c Commitment) check() error {
	if c.Algorithm != AlgorithmSHA256 {
		return fmt.Errorf("evidence: verify commitment: unsupported algorithm %q (want %q)", strictjson.Truncate(c.Algorithm, 32), AlgorithmSHA256)
	}
	if !strictjson.IsHex64(c.Digest) {
		return fmt.Errorf("evidence: verify commitment: digest %q is not 64 lowercase hexadecimal characters", strictjson.Truncate(c.Digest, 80))
	}
	return nil
}

func (c Commitment) compare(actual string) error {
	if actual != c.Digest {
		return fmt.Errorf("evidence: verify commitment: value digest %s, committed %s: %w", actual, c.Digest, ErrCommitmentMismatch)
	}
	return nil
}

package attest

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// fingerprintPrefix starts every fingerprint (OpenSSH's SHA256 form).
const fingerprintPrefix = "SHA256:"

// PublicKey is an Ed25519 public key with its fingerprint.
type PublicKey struct {
	// Fingerprint is "SHA256:" + unpadded base64 of the SHA-256 of the
	// key's SSH wire form, exactly what `ssh-keygen -l` prints for it and
	// what go-securesystemslib's dsse.SHA256KeyID computes. Attestations
	// name their signer by it (the DSSE keyid).
	Fingerprint string `json:"fingerprint"`
	// Key is the raw 32-byte key.
	Key ed25519.PublicKey `json:"-"`
}

// NewPublicKey wraps an Ed25519 public key and computes its fingerprint.
func NewPublicKey(key ed25519.PublicKey) (PublicKey, error) {
	if len(key) != ed25519.PublicKeySize {
		return PublicKey{}, fmt.Errorf("attest: an Ed25519 public key has %d bytes, not %d", ed25519.PublicKeySize, len(key))
	}
	fp, err := dsse.SHA256KeyID(key)
	if err != nil {
		return PublicKey{}, fmt.Errorf("attest: fingerprint: %w", err)
	}
	return PublicKey{Fingerprint: fp, Key: key}, nil
}

// PEM is the key as one PKIX "PUBLIC KEY" PEM block, the form
// `openssl pkey -pubin` and `cosign --key` read.
func (p PublicKey) PEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(p.Key)
	if err != nil { // only for a key NewPublicKey would have refused
		panic(fmt.Sprintf("attest: encode public key: %v", err))
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// fileName is the key's file name in the keyring: the hex form of its
// fingerprint's hash (the base64 form holds '/').
func (p PublicKey) fileName() string {
	n, _ := fileNameOf(p.Fingerprint)
	return n
}

// fileNameOf is the keyring file name of fingerprint fp, false when fp is
// not a fingerprint.
func fileNameOf(fp string) (string, bool) {
	rest, ok := strings.CutPrefix(fp, fingerprintPrefix)
	if !ok {
		return "", false
	}
	sum, err := base64.RawStdEncoding.Strict().DecodeString(rest)
	if err != nil || len(sum) != 32 {
		return "", false
	}
	return hex.EncodeToString(sum) + pubSuffix, true
}

// ParsePublicKeyPEM reads one PKIX "PUBLIC KEY" PEM block holding an
// Ed25519 key; anything else (another key type, several blocks, text
// around the block) is refused with the reason.
func ParsePublicKeyPEM(data []byte) (PublicKey, error) {
	if len(data) > maxKeyFileBytes {
		return PublicKey{}, fmt.Errorf("attest: a public key file has at most %d bytes; this one has %d", maxKeyFileBytes, len(data))
	}
	block, rest := pem.Decode(data)
	if block == nil {
		return PublicKey{}, errors.New("attest: no PEM block found; a public key starts with -----BEGIN PUBLIC KEY-----")
	}
	if block.Type != "PUBLIC KEY" {
		return PublicKey{}, fmt.Errorf("attest: the PEM block is %q, not \"PUBLIC KEY\"", truncate(block.Type, 40))
	}
	if len(strings.TrimSpace(string(rest))) != 0 {
		return PublicKey{}, errors.New("attest: text follows the PEM block; a public key file holds exactly one key")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return PublicKey{}, fmt.Errorf("attest: the PEM block is not a PKIX public key: %w", err)
	}
	ed, ok := key.(ed25519.PublicKey)
	if !ok {
		return PublicKey{}, fmt.Errorf("attest: the key is a %s key; only Ed25519 keys are accepted", keyKind(key))
	}
	return NewPublicKey(ed)
}

func keyKind(k any) string {
	s := fmt.Sprintf("%T", k)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "*"), "crypto/")
	return strings.TrimSuffix(s, ".PublicKey")
}

// Signer signs with the installation's current private key. It implements
// go-securesystemslib's dsse.Signer.
type Signer struct {
	priv ed25519.PrivateKey
	pub  PublicKey
}

// Public is the signer's public key.
func (s *Signer) Public() PublicKey { return s.pub }

// Sign signs data (DSSE's pre-authentication encoding) with Ed25519.
func (s *Signer) Sign(_ context.Context, data []byte) ([]byte, error) {
	return ed25519.Sign(s.priv, data), nil
}

// KeyID is the key's fingerprint.
func (s *Signer) KeyID() (string, error) { return s.pub.Fingerprint, nil }

// verifier checks Ed25519 signatures for dsse.EnvelopeVerifier.
type verifier struct{ pub PublicKey }

func (v verifier) Verify(_ context.Context, data, sig []byte) error {
	if !ed25519.Verify(v.pub.Key, data, sig) {
		return errors.New("ed25519: invalid signature")
	}
	return nil
}

func (v verifier) KeyID() (string, error)   { return v.pub.Fingerprint, nil }
func (v verifier) Public() crypto.PublicKey { return v.pub.Key }

// truncate shortens s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/gatehouse/gatehouse/backend/attest"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
)

// Signature states of a library entry (EvidenceSignature.Status).
const (
	SignedByInstallation = "installation" // signed by a key of this installation
	SignedByTrusted      = "trusted"      // signed by a key the person trusts
	SignedUntrusted      = "untrusted"    // an attestation by a key nobody trusts here
	SignatureInvalid     = "invalid"      // an attestation that does not verify against the file
	Unsigned             = "unsigned"     // no attestation next to the file
)

// EvidenceSignature is what the library says about who signed a file.
type EvidenceSignature struct {
	// Status is one of installation, trusted, untrusted, invalid and unsigned.
	Status string `json:"status"`
	// Fingerprint is the signer's key (installation, trusted, untrusted).
	Fingerprint string `json:"fingerprint,omitempty"`
	// Message says why an attestation did not verify (invalid).
	Message string `json:"message,omitempty"`
}

// attestationPath is where the attestation of Evidence id is kept, next
// to its file (evidence/ID.json.intoto.jsonl).
func attestationPath(dataDir, id string) string {
	return library.FilePath(dataDir, id) + attest.FileSuffix
}

// signatures computes the signature state of library entries by id. The
// trust is read once; each attested file is hashed (streamed) and its
// attestation checked with attest.VerifyDigest.
type signatures struct {
	dataDir string
	trust   attest.Trust
	err     error
}

func (f *Facade) signatures() *signatures {
	s := &signatures{dataDir: f.env.DataDir}
	k, err := keyringAt(f.env.DataDir)
	if err == nil {
		s.trust, err = trustOf(k, nil)
	}
	s.err = err
	return s
}

func (s *signatures) of(f *Facade, id string) EvidenceSignature {
	return s.ofDigest(f, id, "")
}

// ofDigest is of for bytes already in hand: sum is the SHA-256 (hex) of
// exactly the bytes the caller hands on, so the signature state is about
// those bytes and not about whatever the file holds by the time it would
// be read again. An empty sum reads the file's digest.
func (s *signatures) ofDigest(f *Facade, id, sum string) EvidenceSignature {
	att, err := readBounded(attestationPath(s.dataDir, id), attest.MaxAttestationBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return EvidenceSignature{Status: Unsigned}
	}
	if err != nil {
		return EvidenceSignature{Status: SignatureInvalid, Message: err.Error()}
	}
	if s.err != nil {
		return EvidenceSignature{Status: SignatureInvalid, Message: "the signing keys cannot be read: " + s.err.Error()}
	}
	if sum == "" {
		if sum, err = f.digests.of(library.FilePath(s.dataDir, id)); err != nil {
			return EvidenceSignature{Status: SignatureInvalid, Message: err.Error()}
		}
	}
	res, untrusted, issues := attest.VerifyDigest(f.ctx, att, sum, id, s.trust)
	switch {
	case len(issues) == 0 && res.SignedBy == attest.SignerInstallation:
		return EvidenceSignature{Status: SignedByInstallation, Fingerprint: res.Fingerprint}
	case len(issues) == 0:
		return EvidenceSignature{Status: SignedByTrusted, Fingerprint: res.Fingerprint}
	case issues[0].Code == attest.CodeUntrustedKey:
		return EvidenceSignature{Status: SignedUntrusted, Fingerprint: untrusted}
	}
	return EvidenceSignature{Status: SignatureInvalid, Message: issues[0].Message}
}

// fileDigests remembers the SHA-256 of saved Evidence files so that
// listing the library does not hash every attested file each time. An
// entry holds only while the file's size, modification time, change time
// (which no program can set back) and inode are the same, so a file
// changed on disk in any way is hashed again. It is keyed by path and an
// entry is replaced when its file changes, so it is not a content-keyed
// cache (backend/internal/contentcache), whose first answer stays.
type fileDigests struct {
	mu sync.Mutex
	m  map[string]fileDigest
}

type fileDigest struct {
	stamp  [5]int64
	sha256 string
}

// maxFileDigests bounds the remembered digests (the library lists at
// most maxListedEvidence files).
const maxFileDigests = maxListedEvidence

func stampOf(fi os.FileInfo) ([5]int64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return [5]int64{}, false
	}
	return [5]int64{fi.Size(), fi.ModTime().UnixNano(), st.Ctim.Sec, st.Ctim.Nsec, int64(st.Ino)}, true
}

// of returns the SHA-256 of the regular file at path, from memory when
// its stamp is unchanged. Anything else in its place (a FIFO, a device, a
// directory) is an error, opened without blocking so a FIFO cannot hang
// the listing, and so is a file over MaxImportBytes: a digest is always
// of a whole file, never of a prefix.
func (c *fileDigests) of(path string) (string, error) {
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (%s)", filepath.Base(path), fi.Mode().Type())
	}
	stamp, stamped := stampOf(fi)
	if stamped {
		c.mu.Lock()
		d, ok := c.m[path]
		c.mu.Unlock()
		if ok && d.stamp == stamp {
			return d.sha256, nil
		}
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(fh, MaxImportBytes+1))
	if err != nil {
		return "", err
	}
	if n > MaxImportBytes {
		return "", fmt.Errorf("%s is larger than %d bytes", filepath.Base(path), MaxImportBytes)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if after, err := fh.Stat(); err == nil && stamped {
		if s2, _ := stampOf(after); s2 == stamp { // not changed while it was read
			c.mu.Lock()
			if c.m == nil || len(c.m) >= maxFileDigests {
				c.m = map[string]fileDigest{}
			}
			c.m[path] = fileDigest{stamp, sum}
			c.mu.Unlock()
		}
	}
	return sum, nil
}

// SigningKeysArgs takes nothing.
type SigningKeysArgs struct{}

// SigningKeysResult lists the installation's keys (the current one
// first, then rotated ones) and the trusted keys of others.
type SigningKeysResult struct {
	Installation []SigningKeyView `json:"installation"`
	Trusted      []SigningKeyView `json:"trusted"`
}

// SigningKeys returns the installation's signing keys, making the key
// pair on first use (private key in the data directory's
// signing/current.key, mode 0600, never in the database), and the keys
// the person trusts.
func (f *Facade) SigningKeys(SigningKeysArgs) (SigningKeysResult, error) {
	k, err := keyringAt(f.env.DataDir)
	if err != nil {
		return SigningKeysResult{}, err
	}
	if _, err := k.Current(); err != nil {
		return SigningKeysResult{}, errorf("signing_key", CategoryIO, "%v", err)
	}
	return keysOf(k)
}

func keysOf(k *attest.Keyring) (SigningKeysResult, error) {
	t, err := trustOf(k, nil)
	if err != nil {
		return SigningKeysResult{}, err
	}
	return SigningKeysResult{Installation: keyViews(t.Installation, "installation"), Trusted: keyViews(t.Trusted, "trusted")}, nil
}

// RotateSigningKeyArgs takes nothing.
type RotateSigningKeyArgs struct{}

// RotateSigningKey replaces the installation's signing key; the old
// public key stays listed, so what it signed still shows as signed by
// this installation.
func (f *Facade) RotateSigningKey(RotateSigningKeyArgs) (SigningKeysResult, error) {
	k, err := keyringAt(f.env.DataDir)
	if err != nil {
		return SigningKeysResult{}, err
	}
	if _, err := k.Rotate(); err != nil {
		return SigningKeysResult{}, errorf("signing_key", CategoryIO, "%v", err)
	}
	f.events.publish("evidence", evidenceEvent{})
	return keysOf(k)
}

// TrustSigningKeyArgs is another installation's public key (PEM).
type TrustSigningKeyArgs struct {
	PEM string `json:"pem"`
}

// TrustSigningKey trusts another installation's Ed25519 public key:
// Evidence it attested shows as "signed by FINGERPRINT". A key that is
// not one PKIX Ed25519 PEM block is refused (invalid_key), changing
// nothing.
func (f *Facade) TrustSigningKey(a TrustSigningKeyArgs) (SigningKeysResult, error) {
	k, err := keyringAt(f.env.DataDir)
	if err != nil {
		return SigningKeysResult{}, err
	}
	if _, err := k.AddTrusted([]byte(a.PEM)); err != nil {
		return SigningKeysResult{}, &CLIError{Code: "invalid_key", Category: CategoryInvalid, Message: strings.TrimPrefix(err.Error(), "attest: ")}
	}
	f.events.publish("evidence", evidenceEvent{})
	return keysOf(k)
}

// UntrustSigningKeyArgs names a trusted key.
type UntrustSigningKeyArgs struct {
	Fingerprint string `json:"fingerprint"`
}

// UntrustSigningKey stops trusting a key (key_not_found when it was not
// trusted).
func (f *Facade) UntrustSigningKey(a UntrustSigningKeyArgs) (SigningKeysResult, error) {
	k, err := keyringAt(f.env.DataDir)
	if err != nil {
		return SigningKeysResult{}, err
	}
	removed, err := k.RemoveTrusted(a.Fingerprint)
	if err != nil {
		return SigningKeysResult{}, &CLIError{Code: "invalid_arguments", Category: CategoryInvalid, Message: strings.TrimPrefix(err.Error(), "attest: ")}
	}
	if !removed {
		return SigningKeysResult{}, &CLIError{Code: "key_not_found", Category: CategoryNotFound, Message: fmt.Sprintf("%s is not a trusted key", strictTruncate(a.Fingerprint, 80))}
	}
	f.events.publish("evidence", evidenceEvent{})
	return keysOf(k)
}

// AttestEvidenceArgs names one saved Evidence.
type AttestEvidenceArgs struct {
	ID string `json:"id"`
}

// AttestEvidenceResult is a signed attestation of saved Evidence.
type AttestEvidenceResult struct {
	// FileName is the name to save it under (EVIDENCE.json.intoto.jsonl).
	FileName string `json:"file_name"`
	// Attestation is the DSSE envelope, one JSON line.
	Attestation string `json:"attestation"`
	// EvidenceName and Evidence are the attested file's name and exact
	// bytes (base64 in JSON): the attestation's subject, to save beside it.
	EvidenceName string            `json:"evidence_name"`
	Evidence     []byte            `json:"evidence"`
	Signature    EvidenceSignature `json:"signature"`
}

// AttestEvidence signs an in-toto attestation of saved Evidence with this
// installation's key (exactly what `gatehouse evidence attest` writes for
// the same file), after re-verifying the file as GetEvidence does, and
// keeps it next to the file so the library lists it as signed.
func (f *Facade) AttestEvidence(a AttestEvidenceArgs) (AttestEvidenceResult, error) {
	got, err := f.GetEvidence(GetEvidenceArgs{ID: a.ID})
	if err != nil {
		return AttestEvidenceResult{}, err
	}
	env, err := verifiedEnvelope(got.Evidence)
	if err != nil {
		return AttestEvidenceResult{}, err
	}
	k, err := keyringAt(f.env.DataDir)
	if err != nil {
		return AttestEvidenceResult{}, err
	}
	s, err := k.Signer()
	if err != nil {
		return AttestEvidenceResult{}, errorf("signing_key", CategoryIO, "%v", err)
	}
	name := evidenceFileName(got.Item)
	att, err := attest.Attest(f.ctx, s, name, got.Evidence, env)
	if err != nil {
		return AttestEvidenceResult{}, errorf("attest", CategoryInternal, "%v", err)
	}
	if err := writePrivateFile(attestationPath(f.env.DataDir, a.ID), att); err != nil {
		return AttestEvidenceResult{}, err
	}
	f.events.publish("evidence", evidenceEvent{EvidenceID: a.ID, Shared: got.Item.Shared})
	return AttestEvidenceResult{FileName: name + attest.FileSuffix, Attestation: string(att), EvidenceName: name, Evidence: got.Evidence,
		Signature: EvidenceSignature{Status: SignedByInstallation, Fingerprint: s.Public().Fingerprint}}, nil
}

// evidenceFileName is the name an item's file is exported under: the
// imported file's name, else ID.json.
func evidenceFileName(it EvidenceItem) string {
	var s struct {
		FileName string `json:"file_name"`
	}
	_ = json.Unmarshal(it.Summary, &s)
	if s.FileName != "" && !strings.ContainsAny(s.FileName, "/\\\x00") {
		return s.FileName
	}
	return it.EvidenceID + ".json"
}

// checkImportAttestation verifies the attestation imported with an
// Evidence file before anything is written: it must be a well-formed
// attestation of exactly this file. A valid signature by a key nobody
// here trusts is kept (the library shows it as untrusted until the person
// trusts the key); anything else refuses the import.
func (f *Facade) checkImportAttestation(att, data []byte, env *evidence.Envelope) error {
	k, err := keyringAt(f.env.DataDir)
	if err != nil {
		return err
	}
	trust, err := trustOf(k, nil)
	if err != nil {
		return err
	}
	_, issues := attest.Verify(f.ctx, att, data, env, trust)
	if len(issues) == 1 && issues[0].Code == attest.CodeUntrustedKey {
		// Kept unauthenticated, but only if it is about this very file.
		issues = attest.CheckUnverified(att, data, env)
	}
	if len(issues) == 0 {
		return nil
	}
	details := make([]evidenceIssue, len(issues))
	for i, is := range issues {
		details[i] = evidenceIssue(is)
	}
	return &CLIError{Code: "invalid_attestation", Category: CategoryInvalid, Details: details,
		Message: "the attestation does not attest this Evidence file: " + issues[0].Message + "; nothing was imported"}
}

// writePrivateFile writes data to path (mode 0600) through a temporary
// file renamed into place.
func writePrivateFile(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return errorf("attestation_not_saved", CategoryIO, "%v", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return errorf("attestation_not_saved", CategoryIO, "%v", err)
	}
	return nil
}

// keepAttestation saves an imported attestation (already checked) next
// to its Evidence file; nil keeps whatever is there.
func (f *Facade) keepAttestation(id string, att []byte) error {
	if att == nil {
		return nil
	}
	return writePrivateFile(attestationPath(f.env.DataDir, id), att)
}

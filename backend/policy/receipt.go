// Receipts of trusted scopes that Gatehouse can verify (docs/formats/execution-policy.md,
// "Trusted scopes and receipts"): a receipt id is a UUID (version 8) whose
// first 48 bits are random and whose remaining bits carry an HMAC-SHA256,
// keyed by a per-install key kept outside the SQLite file, over the scope,
// its approval time and those random bits. A receipt id written into the
// database by hand, or copied to another scope, does not verify.

package policy

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/google/uuid"
)

// ReceiptKeyFile is the name of the receipt key file in the data directory.
const ReceiptKeyFile = "receipt.key"

// receiptKeySize is the length of a receipt key in bytes.
const receiptKeySize = 32

// LoadReceiptKey reads the receipt key at path, creating it (32 random
// bytes, mode 0600, never overwriting) when it does not exist. A key file
// of the wrong size, or readable or writable by group or others, is an
// error: receipts are then unverifiable and nothing trusted runs.
func LoadReceiptKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		key := make([]byte, receiptKeySize)
		rand.Read(key)
		_, werr := f.Write(key)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return nil, fmt.Errorf("policy: write receipt key: %w", werr)
		}
		return key, nil
	case !errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("policy: create receipt key: %w", err)
	}
	f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0) // never a link in place of the key
	if err != nil {
		return nil, fmt.Errorf("policy: open receipt key: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("policy: receipt key: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("policy: receipt key %s must be a regular file of mode 0600 (it is %v)", path, fi.Mode())
	}
	key, err := io.ReadAll(io.LimitReader(f, receiptKeySize+1))
	if err != nil {
		return nil, fmt.Errorf("policy: read receipt key: %w", err)
	}
	if len(key) != receiptKeySize {
		return nil, fmt.Errorf("policy: receipt key %s has %d bytes, want %d", path, len(key), receiptKeySize)
	}
	return key, nil
}

// receiptMAC is the HMAC of scope s approved at at with the random bits
// nonce, over an unambiguous (JSON array) encoding.
func receiptMAC(key []byte, s Scope, at time.Time, nonce []byte) []byte {
	msg, _ := json.Marshal([]any{"gatehouse-receipt-v1", s.Revision, s.AgentID, s.Workspace,
		s.TimeoutMsCeiling, s.MaxOutputBytesCeiling, at.UTC().Format(time.RFC3339Nano), nonce})
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

// receiptID builds the receipt id of s approved at at from nonce (6 bytes).
func receiptID(key []byte, s Scope, at time.Time, nonce []byte) uuid.UUID {
	var u uuid.UUID
	copy(u[:6], nonce)
	copy(u[6:], receiptMAC(key, s, at, nonce))
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u
}

// issueReceipt returns a fresh verifiable receipt id for s approved at at.
func issueReceipt(key []byte, s Scope, at time.Time) string {
	nonce := make([]byte, 6)
	rand.Read(nonce)
	return receiptID(key, s, at, nonce).String()
}

// verifyReceipt reports whether s carries a receipt this key issued for
// exactly this scope and approval time. Without a key nothing verifies.
func verifyReceipt(key []byte, s Scope) bool {
	if len(key) == 0 || s.ReceiptID == nil || s.ApprovedAt == nil {
		return false
	}
	u, err := uuid.Parse(*s.ReceiptID)
	if err != nil || u.String() != *s.ReceiptID {
		return false
	}
	want := receiptID(key, s, *s.ApprovedAt, u[:6])
	return hmac.Equal(u[:], want[:])
}

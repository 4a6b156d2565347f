package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"syscall"
	"time"
)

// ExecutableNamespace and ExecutableKey are where the store keeps the
// identity the running executable had when it last hashed
// (ExecutableIdentity), so the next process started from the same file
// does not hash it again.
const (
	ExecutableNamespace = "evidence.verifier"
	ExecutableKey       = "running_executable"
)

// racyMargin is how much older than the hash a file's modification and
// change times must be before its identity is kept: a write in the same
// timestamp tick as the last one leaves both times as they were (the
// kernel's file times are coarse), so an identity taken that close to a
// write does not prove the bytes unchanged (git's "racily clean" rule,
// and runner.Pin.CheckKnown's).
const racyMargin = 2 * time.Second

// ExecutableIdentity records that the executable file with this
// identity — device, inode, size, modification and change time — hashed
// to SHA256. Any write, truncation, chmod, or rename of another file over
// the path changes at least one of them (the change time cannot be set
// from user space), so while all are the same the bytes are those hashed.
type ExecutableIdentity struct {
	SHA256  string `json:"sha256"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    uint64 `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	CtimeNs int64  `json:"ctime_ns"`
}

// IdentityStore keeps the running executable's identity between
// processes; *store.DB is one. An error from Get means "nothing kept".
type IdentityStore interface {
	Get(ctx context.Context, namespace, key string) (json.RawMessage, error)
	Put(ctx context.Context, namespace, key string, value json.RawMessage) error
}

// IDKnown is ID with the digest taken from s, without hashing, when s
// keeps an identity the running executable still has; otherwise the
// executable is hashed and, when its identity is not racy (written more
// than 2 s before) and did not change while it was hashed, the identity
// is kept in s for the next process. A nil s is ID. Whichever of ID and
// IDKnown is called first decides the digest for the process.
func (v *ExecutableDigest) IDKnown(s IdentityStore) string {
	v.once.Do(func() { v.hex = executableDigest(runningExecutable, s, time.Now) })
	return v.hex
}

// executableDigest is the SHA-256 of the file at path in lowercase hex
// ("" when it cannot be read), through the identity kept in s.
func executableDigest(path string, s IdentityStore, now func() time.Time) string {
	fh, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer fh.Close()
	before, ok := identityOf(fh)
	if !ok {
		return hashFile(fh)
	}
	var known ExecutableIdentity
	if s != nil {
		if raw, err := s.Get(context.Background(), ExecutableNamespace, ExecutableKey); err == nil && json.Unmarshal(raw, &known) == nil {
			if known.SHA256 != "" && sameFile(known, before) {
				return known.SHA256
			}
		}
	}
	checked := now()
	sum := hashFile(fh)
	if sum == "" || s == nil {
		return sum
	}
	after, ok := identityOf(fh)
	margin := checked.Add(-racyMargin).UnixNano()
	if !ok || !sameFile(after, before) || before.MtimeNs > margin || before.CtimeNs > margin {
		return sum
	}
	before.SHA256 = sum
	if b, err := json.Marshal(before); err == nil {
		_ = s.Put(context.Background(), ExecutableNamespace, ExecutableKey, b) // not kept only costs a hash next time
	}
	return sum
}

// hashFile is the SHA-256 of what f holds from its current offset on, ""
// when it cannot be read.
func hashFile(f *os.File) string {
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// identityOf is the identity of the open regular file f (SHA256 empty).
func identityOf(f *os.File) (ExecutableIdentity, bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return ExecutableIdentity{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ExecutableIdentity{}, false
	}
	return ExecutableIdentity{Dev: uint64(st.Dev), Ino: st.Ino, Size: uint64(st.Size), MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano()}, true
}

// sameFile reports whether a and b are the same identity, digests aside.
func sameFile(a, b ExecutableIdentity) bool {
	a.SHA256, b.SHA256 = "", ""
	return a == b
}

package runner

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// racyMargin is how much older than the check a file's modification and
// change times must be before its identity is remembered. A write in the
// same timestamp tick as the last one would leave both times as they
// were (the kernel's file times are coarse), so an identity taken that
// close to a write does not prove the bytes unchanged; git's "racily
// clean" index entries follow the same rule.
const racyMargin = 2 * time.Second

// KnownIdentity records that the file at Path hashed to SHA256 while it
// had this identity: device, inode, size, modification and change time.
// Any write, truncation, chmod, rename over the path or replacement
// changes at least one of them (the change time cannot be set from user
// space), so while they are all the same the bytes are the ones hashed.
// It is what Pin.CheckKnown returns for the caller to keep (for example
// in the data directory's database) between processes.
type KnownIdentity struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    uint64 `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	CtimeNs int64  `json:"ctime_ns"`
}

// CheckKnown is Check that does not hash the file again when known says
// it was hashed with the pin's SHA-256 at the pin's path and the file
// still has known's identity. The file must still be an executable
// regular file either way. Otherwise the file is hashed as Check hashes
// it; on success the result is the identity to keep for the next check,
// or nil when none may be kept (the file was written less than
// racyMargin before the check, or changed while it was hashed). known
// may be nil or stale; it is never trusted for another path or digest.
func (p Pin) CheckKnown(known *KnownIdentity) (*KnownIdentity, error) {
	return p.checkKnown(known, time.Now)
}

func (p Pin) checkKnown(known *KnownIdentity, now func() time.Time) (*KnownIdentity, error) {
	if p.Path == "" || p.SHA256 == "" {
		return nil, p.Check() // the errors of Check
	}
	f, err := os.OpenFile(p.Path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("runner: Node runtime: %w", err)
	}
	defer f.Close()
	before, err := fileKnownIdentity(f, p)
	if err != nil {
		return nil, err
	}
	if known != nil && *known == before {
		return known, nil
	}
	checked := now()
	sum, err := hashOpen(f)
	if err != nil {
		return nil, err
	}
	if sum != p.SHA256 {
		return nil, p.changed(sum)
	}
	// The identity kept is the hashed file's, the same before and after
	// the hash, and old enough not to be racy.
	after, err := fileKnownIdentity(f, p)
	if err != nil || after != before {
		return nil, nil
	}
	margin := checked.Add(-racyMargin).UnixNano()
	if before.MtimeNs > margin || before.CtimeNs > margin {
		return nil, nil
	}
	return &before, nil
}

// fileKnownIdentity is the identity of the open file f of the pin p,
// which must be an executable regular file.
func fileKnownIdentity(f *os.File, p Pin) (KnownIdentity, error) {
	fi, err := f.Stat()
	if err != nil {
		return KnownIdentity{}, fmt.Errorf("runner: Node runtime: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return KnownIdentity{}, fmt.Errorf("runner: Node runtime %s is not an executable regular file", p.Path)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return KnownIdentity{}, fmt.Errorf("runner: Node runtime %s: no file identity on this system", p.Path)
	}
	return KnownIdentity{Path: p.Path, SHA256: p.SHA256, Dev: uint64(st.Dev), Ino: st.Ino, Size: uint64(st.Size),
		MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano()}, nil
}

func (k KnownIdentity) identity() fileIdentity {
	return fileIdentity{dev: k.Dev, ino: k.Ino, size: k.Size, mtimeNs: k.MtimeNs, ctimeNs: k.CtimeNs}
}

// Package artifact freezes a skill bundle's exact bytes into an immutable
// in-memory Snapshot identified by its revision, and materializes a
// Snapshot into a private staging directory that is re-verified before use.
//
// Files are read with safe opens: every path component is opened relative
// to its parent directory with O_NOFOLLOW, only directories and regular
// files are accepted, and each file is re-stat'ed after reading so a change
// during capture fails the capture instead of producing a mixed snapshot.
package artifact

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// Capture bounds.
const (
	// MaxFileBytes bounds one captured file.
	MaxFileBytes = 1 << 20
	// MaxDeclaredFiles bounds the declared files; SKILL.md and
	// execution.json are captured in addition.
	MaxDeclaredFiles = 64
	// MaxSnapshotBytes bounds file bytes plus metadata (see metadataCost).
	MaxSnapshotBytes = 4 << 20
)

// The two files every executable bundle snapshot contains.
const (
	SkillFile    = "SKILL.md"
	ManifestFile = "execution.json"
)

// metadataCost is what one file's path and framing count against
// MaxSnapshotBytes: its path bytes plus the 16 bytes of length framing the
// revision encoding adds.
func metadataCost(path string) int { return len(path) + 16 }

// Error is a capture or staging failure with a stable code and the
// bundle-relative path it concerns.
type Error struct {
	Code string
	Path string
	Err  error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("artifact: %s: %v", e.Code, e.Err)
	}
	return fmt.Sprintf("artifact: %s: %s: %v", e.Code, e.Path, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

func fail(code, path, format string, args ...any) *Error {
	return &Error{Code: code, Path: path, Err: fmt.Errorf(format, args...)}
}

// File is one captured file.
type File struct {
	Path string // bundle-relative, slash separated
	data []byte
}

// Size is the file's length in bytes.
func (f File) Size() int { return len(f.data) }

// Snapshot is an immutable capture of a bundle. Its bytes cannot be changed
// through its methods; Bytes returns copies.
type Snapshot struct {
	files    []File // sorted by Path
	revision string
	total    int
}

// Revision is the snapshot's identity, "sha256:<hex>".
func (s *Snapshot) Revision() string { return s.revision }

// TotalBytes is file bytes plus metadata, as counted against MaxSnapshotBytes.
func (s *Snapshot) TotalBytes() int { return s.total }

// Paths lists the captured paths in byte order.
func (s *Snapshot) Paths() []string {
	out := make([]string, len(s.files))
	for i, f := range s.files {
		out[i] = f.Path
	}
	return out
}

// Bytes returns a copy of the captured bytes of path.
func (s *Snapshot) Bytes(path string) ([]byte, bool) {
	i := sort.Search(len(s.files), func(i int) bool { return s.files[i].Path >= path })
	if i == len(s.files) || s.files[i].Path != path {
		return nil, false
	}
	return append([]byte(nil), s.files[i].data...), true
}

// Capture reads SKILL.md, execution.json and every declared file of the
// bundle folder dir into memory and computes the revision. declared holds
// portable relative paths (already checked by the manifest parser, and
// checked again here). It fails with an *Error on an absolute path, "..",
// a duplicate, a symlink anywhere along a path, a special file, a file over
// MaxFileBytes, more than MaxDeclaredFiles files, a total over
// MaxSnapshotBytes, or a file that changes while it is read.
func Capture(dir string, declared []string) (*Snapshot, error) {
	if len(declared) > MaxDeclaredFiles {
		return nil, fail("too_many_files", "", "%d declared files; the limit is %d", len(declared), MaxDeclaredFiles)
	}
	return capturePaths(dir, append([]string{SkillFile, ManifestFile}, declared...))
}

// capturePaths captures exactly paths below dir.
func capturePaths(dir string, paths []string) (*Snapshot, error) {
	seen := map[string]bool{}
	for _, p := range paths {
		if err := checkRelative(p); err != nil {
			return nil, err
		}
		if seen[p] {
			return nil, fail("duplicate_path", p, "listed more than once")
		}
		seen[p] = true
	}
	root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fail("open_bundle", "", "open bundle folder %s: %w", dir, err)
	}
	defer unix.Close(root)

	snap := &Snapshot{}
	for _, p := range paths {
		snap.total += metadataCost(p)
		if snap.total > MaxSnapshotBytes {
			return nil, fail("snapshot_too_large", p, "snapshot exceeds %d bytes", MaxSnapshotBytes)
		}
		data, err := readSafe(root, p, MaxSnapshotBytes-snap.total)
		if err != nil {
			return nil, err
		}
		snap.total += len(data)
		snap.files = append(snap.files, File{Path: p, data: data})
	}
	sort.Slice(snap.files, func(i, j int) bool { return snap.files[i].Path < snap.files[j].Path })
	snap.revision = revisionOf(snap.files)
	return snap, nil
}

func checkRelative(p string) *Error {
	switch {
	case p == "":
		return fail("invalid_path", p, "empty path")
	case strings.HasPrefix(p, "/"):
		return fail("absolute_path", p, "absolute paths are not allowed")
	case strings.Contains(p, "\\"):
		return fail("invalid_path", p, "backslashes are not allowed")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return fail("parent_traversal", p, "'..' is not allowed")
		}
		if seg == "" || seg == "." {
			return fail("invalid_path", p, "empty or '.' path segment")
		}
	}
	return nil
}

// ReadFile reads the bundle-relative path rel below dir with the same safe
// opens as Capture (no symlinks anywhere along the path, regular files
// only, re-stat after reading), refusing files larger than max bytes.
func ReadFile(dir, rel string, max int) ([]byte, error) {
	if err := checkRelative(rel); err != nil {
		return nil, err
	}
	root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fail("open_bundle", "", "open folder %s: %w", dir, err)
	}
	defer unix.Close(root)
	data, _, err := readLimited(root, rel, max, max)
	return data, err
}

// FileIdentity is the device, inode and link count of a file as it was
// read.
type FileIdentity struct {
	Dev, Ino, Nlink uint64
}

// ReadFileIdentity is ReadFile that also returns the identity of the file
// it read (from the descriptor it read, so it names exactly those bytes).
func ReadFileIdentity(dir, rel string, max int) ([]byte, FileIdentity, error) {
	if err := checkRelative(rel); err != nil {
		return nil, FileIdentity{}, err
	}
	root, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, FileIdentity{}, fail("open_bundle", "", "open folder %s: %w", dir, err)
	}
	defer unix.Close(root)
	data, st, err := readLimited(root, rel, max, max)
	if err != nil {
		return nil, FileIdentity{}, err
	}
	return data, FileIdentity{Dev: uint64(st.Dev), Ino: st.Ino, Nlink: uint64(st.Nlink)}, nil
}

// readSafe opens p below the directory fd root one component at a time
// without following links, reads at most min(MaxFileBytes, budget) bytes,
// and re-checks the file afterwards.
func readSafe(root int, p string, budget int) ([]byte, error) {
	data, _, err := readLimited(root, p, MaxFileBytes, budget)
	return data, err
}

func readLimited(root int, p string, limit, budget int) ([]byte, unix.Stat_t, error) {
	segs := strings.Split(p, "/")
	dirfd := root
	for _, seg := range segs[:len(segs)-1] {
		fd, err := unix.Openat(dirfd, seg, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if dirfd != root {
			unix.Close(dirfd)
		}
		if err != nil {
			return nil, unix.Stat_t{}, openError(p, err)
		}
		dirfd = fd
	}
	if dirfd != root {
		defer unix.Close(dirfd)
	}
	name := segs[len(segs)-1]
	// O_NONBLOCK keeps a FIFO from blocking the open; it is refused below.
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, unix.Stat_t{}, openError(p, err)
	}
	defer unix.Close(fd)
	var before unix.Stat_t
	if err := unix.Fstat(fd, &before); err != nil {
		return nil, unix.Stat_t{}, fail("stat", p, "%w", err)
	}
	if before.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, unix.Stat_t{}, fail("not_regular", p, "not a regular file (special files are refused)")
	}
	if before.Size > int64(limit) {
		return nil, unix.Stat_t{}, fail("file_too_large", p, "%d bytes; the limit is %d", before.Size, limit)
	}
	if before.Size > int64(budget) {
		return nil, unix.Stat_t{}, fail("snapshot_too_large", p, "snapshot exceeds %d bytes", MaxSnapshotBytes)
	}
	data, err := readAtMost(fd, int(before.Size)+1)
	if err != nil {
		return nil, unix.Stat_t{}, fail("read", p, "%w", err)
	}
	var after unix.Stat_t
	if err := unix.Fstat(fd, &after); err != nil {
		return nil, unix.Stat_t{}, fail("stat", p, "%w", err)
	}
	var linked unix.Stat_t
	relinkErr := unix.Fstatat(dirfd, name, &linked, unix.AT_SYMLINK_NOFOLLOW)
	if int64(len(data)) != before.Size || after.Size != before.Size ||
		after.Mtim != before.Mtim || after.Ctim != before.Ctim || after.Ino != before.Ino ||
		relinkErr != nil || linked.Ino != before.Ino || linked.Dev != before.Dev {
		return nil, unix.Stat_t{}, fail("changed_during_capture", p, "the file changed while it was being captured")
	}
	return data, before, nil
}

func openError(p string, err error) *Error {
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOTDIR):
		// O_NOFOLLOW on a symlink gives ELOOP; O_DIRECTORY on a symlink
		// or a file gives ENOTDIR.
		return fail("symlink_or_not_directory", p, "a path component is a symlink or not a directory: %w", err)
	case errors.Is(err, unix.ENOENT):
		return fail("missing", p, "no such file")
	}
	return fail("open", p, "%w", err)
}

// readAtMost reads fd to its end or until n bytes are read, into one
// buffer of n bytes. It reads the descriptor directly (not through an
// os.File, which would register the non-blocking descriptor with the
// runtime poller on every open): a skill listing reads hundreds of small
// files per call.
func readAtMost(fd, n int) ([]byte, error) {
	buf := make([]byte, n)
	got := 0
	for got < n {
		m, err := unix.Read(fd, buf[got:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		got += m
	}
	return buf[:got:got], nil
}

package capture

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/gatehouse/gatehouse/backend/capture/record"
)

// File types of a FileState.
const (
	FileTypeFile      = record.FileTypeFile
	FileTypeSymlink   = record.FileTypeSymlink
	FileTypeDirectory = record.FileTypeDirectory
	FileTypeOther     = record.FileTypeOther
)

// Statuses of a FileEffect.
const (
	EffectCreated   = record.EffectCreated
	EffectDeleted   = record.EffectDeleted
	EffectModified  = record.EffectModified
	EffectUnchanged = record.EffectUnchanged
)

// FilesystemRootPlaceholder is the path of filesystem root index in
// recorded file states: "<filesystem-root-N>"; entries below it are
// "<filesystem-root-N>/rel/path".
func FilesystemRootPlaceholder(index int) string { return fmt.Sprintf("<filesystem-root-%d>", index) }

// Limits of one snapshot, by the scenario limit that names them.
const (
	limitFiles = "limits.files"
	limitBytes = "limits.file_bytes"
	limitDepth = "limits.filesystem_depth"
)

// fileKey identifies one entry of a snapshot independently of how its
// path is recorded: the filesystem root's index and the slash-separated
// path below it ("" for the root itself).
type fileKey struct {
	root int
	rel  string
}

// snapshot is one walk of every filesystem root. States hold raw values
// (Path is the absolute path, SymlinkTarget unnormalized); they are
// compared raw, so normalization cannot invent or hide a change, and
// normalized only when recorded.
type snapshot struct {
	keys   []fileKey // walk order
	states map[fileKey]FileState
	// exceeded names the limits that stopped the walk or hashing
	// (limitFiles, limitBytes, limitDepth), in the order first hit.
	exceeded []string
	// unreadable lists entries that could not be read, "path: error".
	unreadable []string
	// hashStopped: a file did not fit limits.file_bytes, so it and every
	// later file have no sha256.
	hashStopped bool
	// filesStopped: the walk stopped at limits.files, so entries after the
	// last listed one are unobserved (not absent).
	filesStopped bool
}

func (s *snapshot) truncated() bool { return len(s.exceeded) > 0 }

func (s *snapshot) exceed(limit string) {
	for _, l := range s.exceeded {
		if l == limit {
			return
		}
	}
	s.exceeded = append(s.exceeded, limit)
}

// walker takes one snapshot of roots within limits.
type walker struct {
	ctx    context.Context
	limits Limits
	snap   *snapshot
	hashed int64 // bytes hashed so far
}

// takeSnapshot walks every root in order, without following symbolic
// links (a root that is a link is recorded as a link), listing each
// entry's mode, size, type, SHA-256 (regular files) and link target. The
// walk is bounded: limits.files entries in all (roots included),
// limits.file_bytes bytes hashed in all, and entries at most
// limits.filesystem_depth levels below their root. A root that does not
// exist contributes no entry. It returns early (with what it has) when
// ctx is done.
func takeSnapshot(ctx context.Context, roots []string, limits Limits) *snapshot {
	w := &walker{ctx: ctx, limits: limits, snap: &snapshot{states: map[fileKey]FileState{}}}
	for i, root := range roots {
		if w.stopped() {
			break
		}
		fi, err := os.Lstat(root)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				w.snap.unreadable = append(w.snap.unreadable, fmt.Sprintf("%s: %v", FilesystemRootPlaceholder(i), errText(err)))
			}
			continue
		}
		if !w.add(fileKey{i, ""}, root, fi) {
			break
		}
		if fi.IsDir() {
			w.dir(i, root, "", 0)
		}
	}
	return w.snap
}

func (w *walker) stopped() bool { return w.snap.filesStopped || w.ctx.Err() != nil }

// dir lists directory abs (rel below root i, depth levels down).
func (w *walker) dir(i int, abs, rel string, depth int) {
	if w.stopped() {
		return
	}
	entries, err := os.ReadDir(abs) // sorted by name
	if err != nil {
		w.snap.unreadable = append(w.snap.unreadable, fmt.Sprintf("%s: %v", displayPath(i, rel), errText(err)))
		return
	}
	if len(entries) > 0 && depth >= w.limits.FilesystemDepth {
		w.snap.exceed(limitDepth)
		return
	}
	for _, e := range entries {
		if w.stopped() {
			return
		}
		childAbs, childRel := filepath.Join(abs, e.Name()), joinRel(rel, e.Name())
		fi, err := os.Lstat(childAbs)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) { // removed while walking: simply absent
				w.snap.unreadable = append(w.snap.unreadable, fmt.Sprintf("%s: %v", displayPath(i, childRel), errText(err)))
			}
			continue
		}
		if !w.add(fileKey{i, childRel}, childAbs, fi) {
			return
		}
		if fi.IsDir() {
			w.dir(i, childAbs, childRel, depth+1)
		}
	}
}

// add records one entry; it reports false when limits.files stops the walk.
func (w *walker) add(k fileKey, abs string, fi fs.FileInfo) bool {
	if len(w.snap.keys) >= w.limits.Files {
		w.snap.exceed(limitFiles)
		w.snap.filesStopped = true
		return false
	}
	st := FileState{Path: abs, Mode: unixMode(fi.Mode())}
	switch m := fi.Mode(); {
	case m.IsRegular():
		st.Type, st.Size = FileTypeFile, fi.Size()
		w.hash(k, abs, &st)
	case m&fs.ModeSymlink != 0:
		st.Type = FileTypeSymlink
		if target, err := os.Readlink(abs); err == nil {
			st.SymlinkTarget, st.Size = &target, int64(len(target))
		} else {
			w.snap.unreadable = append(w.snap.unreadable, fmt.Sprintf("%s: %v", displayPath(k.root, k.rel), errText(err)))
		}
	case m.IsDir():
		st.Type = FileTypeDirectory
	default:
		st.Type = FileTypeOther
	}
	w.snap.keys = append(w.snap.keys, k)
	w.snap.states[k] = st
	return true
}

// hash sets st.SHA256 (and st.Size to the bytes hashed) when the file still
// fits limits.file_bytes. It opens only what is still a regular file, and
// never blocks on a FIFO swapped in since the Lstat.
func (w *walker) hash(k fileKey, abs string, st *FileState) {
	if w.snap.hashStopped {
		return
	}
	f, err := os.OpenFile(abs, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.snap.unreadable = append(w.snap.unreadable, fmt.Sprintf("%s: %v", displayPath(k.root, k.rel), errText(err)))
		}
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	room := int64(w.limits.FileBytes) - w.hashed
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, room+1))
	if err != nil {
		w.snap.unreadable = append(w.snap.unreadable, fmt.Sprintf("%s: %v", displayPath(k.root, k.rel), errText(err)))
		return
	}
	if n > room {
		w.snap.hashStopped = true
		w.snap.exceed(limitBytes)
		return
	}
	w.hashed += n
	sum := hex.EncodeToString(h.Sum(nil))
	st.SHA256, st.Size = &sum, n
}

// unixMode is the permission bits of m with setuid (04000), setgid
// (02000) and sticky (01000) as in stat(2), without the file type.
func unixMode(m fs.FileMode) int {
	mode := int(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	return mode
}

func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// displayPath is the placeholder form of an entry, before redaction.
func displayPath(root int, rel string) string {
	if rel == "" {
		return FilesystemRootPlaceholder(root)
	}
	return FilesystemRootPlaceholder(root) + "/" + rel
}

// errText is an error without the absolute path os errors carry.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Op + ": " + le.Err.Error()
	}
	return err.Error()
}

// sameState reports whether two raw states of one path are equal. A file
// whose content was not hashed (limits.file_bytes) on either side counts
// as unchanged when everything else is equal: a change cannot be shown.
func sameState(a, b FileState) bool {
	if a.Type != b.Type || a.Mode != b.Mode || a.Size != b.Size || !eqPtr(a.SymlinkTarget, b.SymlinkTarget) {
		return false
	}
	if a.SHA256 == nil || b.SHA256 == nil {
		return true
	}
	return *a.SHA256 == *b.SHA256
}

func eqPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// rawEffect is one difference between two snapshots, before recording.
type rawEffect struct {
	key           fileKey
	status        string
	before, after *FileState
}

// diff lists how cur differs from prev: entries created, deleted and
// modified (unchanged entries are omitted), ordered by root then path.
// An entry missing from a snapshot whose walk stopped at limits.files was
// not observed there, so it is neither created nor deleted.
func diff(prev, cur *snapshot) []rawEffect {
	var out []rawEffect
	for k, b := range prev.states {
		a, ok := cur.states[k]
		switch {
		case !ok && !cur.filesStopped:
			out = append(out, rawEffect{k, EffectDeleted, &b, nil})
		case ok && !sameState(b, a):
			out = append(out, rawEffect{k, EffectModified, &b, &a})
		}
	}
	for k, a := range cur.states {
		if _, ok := prev.states[k]; !ok && !prev.filesStopped {
			out = append(out, rawEffect{k, EffectCreated, nil, &a})
		}
	}
	sort.Slice(out, func(i, j int) bool { return keyLess(out[i].key, out[j].key) })
	return out
}

func keyLess(a, b fileKey) bool {
	if a.root != b.root {
		return a.root < b.root
	}
	return a.rel < b.rel
}

// sortedKeys returns the snapshot's keys ordered by root then path.
func (s *snapshot) sortedKeys() []fileKey {
	keys := append([]fileKey(nil), s.keys...)
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	return keys
}

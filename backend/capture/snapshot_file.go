package capture

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The renderer snapshots' files (RendererSnapshots): the cache directory's
// checks, a file's verified read and atomic write, pruning, and the sealed
// memory files Node is given.

// staleSnapshot is the age past which another key's snapshot file is
// removed when one is written (those of earlier bundles and Nodes, after
// an upgrade).
const staleSnapshot = 7 * 24 * time.Hour

// pruneSnapshots removes the snapshot files of dir other than keep last
// modified before cutoff (best effort: a leftover is only disk space).
func pruneSnapshots(dir *os.File, keep string, cutoff time.Time) {
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return
	}
	for _, n := range names {
		if n == keep || !strings.HasPrefix(n, "renderer-") || !(strings.HasSuffix(n, ".snapshot") || strings.HasSuffix(n, ".tmp")) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(int(dir.Fd()), n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && time.Unix(st.Mtim.Unix()).Before(cutoff) {
			unix.Unlinkat(int(dir.Fd()), n, 0) //nolint:errcheck // see above
		}
	}
}

// openCacheDir opens dir (made 0700 when missing), refusing one that is
// not this user's or that others may write to.
func openCacheDir(dir string) (*os.File, error) {
	if dir == "" {
		return nil, errors.New("no startup snapshot: no cache directory was given")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("snapshot cache: %w", err)
	}
	d, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("snapshot cache: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(d.Fd()), &st); err != nil {
		d.Close()
		return nil, fmt.Errorf("snapshot cache %s: %w", dir, err)
	}
	if int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		d.Close()
		return nil, fmt.Errorf("snapshot cache %s: refused: it is not this user's own directory (owner %d, mode %o)", dir, st.Uid, st.Mode&0o7777)
	}
	return d, nil
}

// readSnapshot reads and verifies file name in dir: a regular file of
// this user, not writable by others, at most maxSnapshot bytes of blob,
// recording key and the blob's SHA-256. It returns the blob as a sealed
// memory file (sealedFile's seals), or an os.ErrNotExist error when there
// is no such file.
//
// The blob is copied into the memory file by the kernel (sendfile), which
// is then sealed, and the SHA-256 is taken of the sealed bytes (mapped):
// what is verified is exactly what Node is given, and the 5 MB are not
// read into this process and copied out again (that took about three
// times as long, on the critical path of every capture-process).
func readSnapshot(dir *os.File, name, key string) (*os.File, error) {
	fd, err := unix.Openat(int(dir.Fd()), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil, fmt.Errorf("%s: %w", name, os.ErrNotExist)
	case errors.Is(err, unix.ELOOP):
		return nil, fmt.Errorf("%s is a symbolic link", name)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Geteuid() || st.Mode&0o022 != 0 {
		return nil, fmt.Errorf("%s is not a regular file of this user", name)
	}
	hdr := make([]byte, len(snapshotMagic)+130)
	n, err := io.ReadFull(f, hdr)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	rest, ok := bytes.CutPrefix(hdr[:n], []byte(snapshotMagic))
	if !ok || len(rest) < 2*65 {
		return nil, fmt.Errorf("%s is not a snapshot file", name)
	}
	if string(rest[:64]) != key || rest[64] != '\n' || rest[129] != '\n' {
		return nil, fmt.Errorf("%s is another snapshot's file", name)
	}
	want, size := string(rest[65:129]), st.Size-int64(len(hdr))
	if size <= 0 || size > maxSnapshot {
		return nil, fmt.Errorf("%s holds a blob of %d bytes", name, max(size, 0))
	}
	mem, err := copySealed("gatehouse-renderer-snapshot", f, int(size))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	b, err := unix.Mmap(int(mem.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		mem.Close()
		return nil, fmt.Errorf("%s: map the blob: %w", name, err)
	}
	got := sha256.Sum256(b)
	unix.Munmap(b) //nolint:errcheck // a mapping of a file kept open; nothing to recover
	if hex.EncodeToString(got[:]) != want {
		mem.Close()
		return nil, fmt.Errorf("%s: its blob's SHA-256 is not the one recorded", name)
	}
	return mem, nil
}

// copySealed is a sealed memory file (sealedFile's seals) holding the
// next size bytes of src, copied by the kernel; a src that ends sooner
// (truncated meanwhile) is an error.
func copySealed(name string, src *os.File, size int) (*os.File, error) {
	f, err := memFile(name)
	if err != nil {
		return nil, err
	}
	for left := size; left > 0; {
		n, err := unix.Sendfile(int(f.Fd()), int(src.Fd()), nil, left)
		if err == nil && n == 0 {
			err = io.ErrUnexpectedEOF
		}
		if err != nil && !errors.Is(err, unix.EINTR) && !errors.Is(err, unix.EAGAIN) {
			f.Close()
			return nil, fmt.Errorf("copy the blob: %w", err)
		}
		left -= max(n, 0)
	}
	if err := seal(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeSnapshot writes key's file atomically (a new file of mode 0600
// renamed over name, which replaces a symlink rather than following it).
func writeSnapshot(dir *os.File, name, key string, blob []byte) error {
	sum := sha256.Sum256(blob)
	tmp := name + "." + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 36) + ".tmp"
	fd, err := unix.Openat(int(dir.Fd()), tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.WriteString(snapshotMagic + key + "\n" + hex.EncodeToString(sum[:]) + "\n")
	if err == nil {
		_, err = f.Write(blob)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(int(dir.Fd()), tmp, int(dir.Fd()), name)
	}
	if err != nil {
		unix.Unlinkat(int(dir.Fd()), tmp, 0) //nolint:errcheck // best effort: a leftover temporary file is never read
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// sealedFile is a memory file holding b that nobody can change any more
// (sealed against writes, growing and shrinking).
func sealedFile(name string, b []byte) (*os.File, error) {
	f, err := memFile(name)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	if err := seal(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// memFile is a new memory file that can be sealed.
func memFile(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_NOEXEC_SEAL)
	if err != nil { // kernels before 6.3 know no MFD_NOEXEC_SEAL
		fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// seal seals memory file f against writes, growing and shrinking.
func seal(f *os.File) error {
	seals := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		return fmt.Errorf("seal %s: %w", f.Name(), err)
	}
	return nil
}

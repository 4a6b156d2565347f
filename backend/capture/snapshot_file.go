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

// openSnapshot opens and verifies file name in dir: a regular file of
// this user, not writable by others, at most maxSnapshot bytes of blob,
// recording key and the blob's SHA-256. It returns the blob as a sealed
// memory file (sealedFile), or an os.ErrNotExist error when there is no
// such file.
//
// Why not read the blob and write it into the memory file: the kernel
// copies it (sendfile) and the sealed file's own pages are hashed
// (mapped read-only), so what was verified is what Node is given, and
// the 5 MB blob never passes through this process's heap (a read into a
// buffer, a copy into the memory file and the garbage collection the
// buffer caused cost ~10 ms of every capture's helper start).
func openSnapshot(dir *os.File, name, key string) (*os.File, error) {
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
	header := make([]byte, len(snapshotMagic)+2*65)
	if _, err := io.ReadFull(f, header); err != nil || !bytes.HasPrefix(header, []byte(snapshotMagic)) {
		return nil, fmt.Errorf("%s is not a snapshot file", name)
	}
	rest := header[len(snapshotMagic):]
	if string(rest[:64]) != key || rest[64] != '\n' || rest[129] != '\n' {
		return nil, fmt.Errorf("%s is another snapshot's file", name)
	}
	want, size := string(rest[65:129]), st.Size-int64(len(header))
	if size <= 0 || size > maxSnapshot {
		return nil, fmt.Errorf("%s holds a blob of %d bytes", name, max(size, 0))
	}
	m, err := memoryFile("gatehouse-renderer-snapshot")
	if err != nil {
		return nil, err
	}
	if err := copyBlob(m, f, size); err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := seal(m); err != nil {
		m.Close()
		return nil, err
	}
	got, err := mappedSHA256(m, size)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if hex.EncodeToString(got[:]) != want {
		m.Close()
		return nil, fmt.Errorf("%s: its blob's SHA-256 is not the one recorded", name)
	}
	return m, nil
}

// copyBlob copies the size bytes of src from its offset on into m by
// sendfile, refusing a src that ends early or holds more (it changed
// after its size was taken).
func copyBlob(m, src *os.File, size int64) error {
	out, in := int(m.Fd()), int(src.Fd())
	for left := size; left > 0; {
		n, err := unix.Sendfile(out, in, nil, int(min(left, 1<<30)))
		if err == unix.EINTR || err == unix.EAGAIN {
			continue
		}
		if err != nil {
			return fmt.Errorf("copy the blob: %w", err)
		}
		if n == 0 {
			return errors.New("it changed while it was read (shorter than its size)")
		}
		left -= int64(n)
	}
	var one [1]byte
	if n, _ := src.Read(one[:]); n != 0 {
		return errors.New("it changed while it was read (longer than its size)")
	}
	return nil
}

// mappedSHA256 is the SHA-256 of the first size bytes of the sealed
// memory file m, read through a read-only mapping of it.
func mappedSHA256(m *os.File, size int64) ([sha256.Size]byte, error) {
	b, err := unix.Mmap(int(m.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE) // populated: one walk instead of a fault per page
	if err != nil {
		return [sha256.Size]byte{}, fmt.Errorf("map the blob: %w", err)
	}
	defer unix.Munmap(b) //nolint:errcheck // unmapping a mapping made here
	return sha256.Sum256(b), nil
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
	f, err := memoryFile(name)
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

// memoryFile is a new, empty memory file that can be sealed.
func memoryFile(name string) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_NOEXEC_SEAL)
	if err != nil { // kernels before 6.3 know no MFD_NOEXEC_SEAL
		fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// seal seals the memory file f against writes, growing, shrinking and
// further seals.
func seal(f *os.File) error {
	seals := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, seals); err != nil {
		return fmt.Errorf("seal %s: %w", f.Name(), err)
	}
	return nil
}

package capture

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// snapshotHelper is base (a testHelper) with snapshots kept in dir, as a
// new process would have it.
func snapshotHelper(t *testing.T, base RendererHelper, dir string) RendererHelper {
	t.Helper()
	h := base
	sum, err := fileSHA256(h.Node)
	if err != nil {
		t.Fatal(err)
	}
	h.NodeSHA256, h.Snapshots = sum, NewRendererSnapshots(dir)
	return h
}

// loaderOf is h without snapshots.
func loaderOf(h RendererHelper) RendererHelper {
	h.NodeSHA256, h.Snapshots = "", nil
	return h
}

// snapshotFile is the one snapshot file in dir.
func snapshotFile(t *testing.T, dir string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "renderer-*.snapshot"))
	if err != nil || len(m) != 1 {
		t.Fatalf("snapshot files in %s: %v %v", dir, m, err)
	}
	return m[0]
}

// renderSome renders a few escape-heavy lines on a screen of h and
// returns the frame, checking the helper started from a snapshot or not.
func renderSome(t *testing.T, h RendererHelper, fromSnapshot bool) RenderedFrame {
	t.Helper()
	s := startTestScreen(t, h, Terminal{Columns: 20, Rows: 4, Scrollback: 10})
	if s.fromSnapshot != fromSnapshot {
		t.Fatalf("fromSnapshot = %v, want %v (status: %s)", s.fromSnapshot, fromSnapshot, h.Snapshots.Status())
	}
	if s.version != "@xterm/headless 6.0.0" {
		t.Fatalf("version %q", s.version)
	}
	if err := s.writeString("a\x1b[1;31mb\x1b[0m\r\n\u4e2d\x1b[3b\r\nxy\x1b[b|\x1b[?1049h"); err != nil {
		t.Fatal(err)
	}
	return xsnap(t, s)
}

func TestRendererSnapshotBuiltOnceAndFramesUnchanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	base := testHelper(t)
	h := snapshotHelper(t, base, dir)
	got := renderSome(t, h, true)
	if st := h.Snapshots.Status(); !strings.Contains(st, " built") {
		t.Fatalf("status %q", st)
	}
	info, err := os.Stat(snapshotFile(t, dir))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file: %v %v", info, err)
	}
	if d, _ := os.Stat(dir); d.Mode().Perm() != 0o700 {
		t.Fatalf("cache dir mode %v", d.Mode())
	}
	want := renderSome(t, loaderOf(base), false) // the loader
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("from the snapshot:\n%#v\nwith the loader:\n%#v", got, want)
	}
	// a second process reads and verifies the file rather than building
	h2 := snapshotHelper(t, base, dir)
	renderSome(t, h2, true)
	if st := h2.Snapshots.Status(); !strings.Contains(st, "verified") {
		t.Fatalf("status %q", st)
	}
}

// TestRendererSnapshotTamperedIsNeverUsed: a snapshot file changed by one
// byte, truncated, holding another key's valid blob, replaced by a
// symbolic link or a FIFO, or writable by others is rebuilt, never loaded
// (and reading a FIFO does not hang).
func TestRendererSnapshotTamperedIsNeverUsed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	base := testHelper(t)
	h := snapshotHelper(t, base, dir)
	renderSome(t, h, true)
	file := snapshotFile(t, dir)
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	otherFile := otherFlagsSnapshot(t, base)
	elsewhere := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(elsewhere, good, 0o600); err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0x20
	cases := []struct {
		name, why string
		plant     func() error
	}{
		{"one byte changed", "SHA-256 is not the one recorded", func() error { return os.WriteFile(file, flipped, 0o600) }},
		{"truncated", "SHA-256 is not the one recorded", func() error { return os.WriteFile(file, good[:len(good)-4096], 0o600) }},
		{"another valid blob", "another snapshot's file", func() error { return os.WriteFile(file, otherFile, 0o600) }},
		// the bound on the blob read, at the limit and one past it (the
		// files are sparse: reading them costs no disk)
		{"a blob of the largest size", "SHA-256 is not the one recorded", func() error { return plantSized(file, good, maxSnapshot) }},
		{"a blob one byte too large", fmt.Sprintf("holds a blob of %d bytes", maxSnapshot+1), func() error { return plantSized(file, good, maxSnapshot+1) }},
		{"a symbolic link", "symbolic link", func() error { return os.Symlink(elsewhere, file) }},
		{"a FIFO", "not a regular file of this user", func() error { return unix.Mkfifo(file, 0o600) }},
		{"writable by others", "not a regular file of this user", func() error {
			if err := os.WriteFile(file, good, 0o600); err != nil {
				return err
			}
			return os.Chmod(file, 0o666)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(file)
			if err := tc.plant(); err != nil {
				t.Fatal(err)
			}
			h := snapshotHelper(t, base, dir)
			renderSome(t, h, true)
			if st := h.Snapshots.Status(); !strings.Contains(st, "rebuilt") || !strings.Contains(st, tc.why) {
				t.Fatalf("status %q, want it rebuilt because %q", st, tc.why)
			}
			info, err := os.Lstat(file)
			if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
				t.Fatalf("after the rebuild: %v %v", info, err)
			}
			if b, _ := os.ReadFile(elsewhere); string(b) != string(good) {
				t.Fatal("the symlink's target was written")
			}
			// the rebuilt file verifies
			h2 := snapshotHelper(t, base, dir)
			renderSome(t, h2, true)
			if st := h2.Snapshots.Status(); !strings.Contains(st, "verified") {
				t.Fatalf("status %q", st)
			}
		})
	}
}

// TestRendererSnapshotUnusableFallsBack: without a usable cache directory
// (others may write to it) or the Node's digest, helpers start with the
// loader and Status says why.
func TestRendererSnapshotUnusableFallsBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	base := testHelper(t)
	h := snapshotHelper(t, base, dir)
	renderSome(t, h, false)
	if st := h.Snapshots.Status(); !strings.Contains(st, "without a startup snapshot") || !strings.Contains(st, "not this user's own directory") {
		t.Fatalf("status %q", st)
	}
	if err := h.Snapshots.Prepare(h); err == nil {
		t.Fatal("Prepare accepted a directory others may write to")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Fatalf("files written in it: %v", m)
	}
	h = snapshotHelper(t, base, filepath.Join(t.TempDir(), "cache"))
	h.NodeSHA256 = ""
	renderSome(t, h, false)
	if st := h.Snapshots.Status(); !strings.Contains(st, "SHA-256 was not given") {
		t.Fatalf("status %q", st)
	}
}

// TestRendererSnapshotSealedAndReadOnce: the blob Node is given is a
// memory file sealed against change, read and verified once per
// RendererSnapshots, so a file changed on disk afterwards is never what
// a helper starts from; concurrent starts share one build.
func TestRendererSnapshotSealedAndReadOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	base := testHelper(t)
	h := snapshotHelper(t, base, dir)
	flags := heapFlags(rendererMemory(h))
	var wg sync.WaitGroup
	files := make([]*os.File, 4)
	for i := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := h.Snapshots.blob(h, flags)
			if err != nil {
				t.Error(err)
			}
			files[i] = f
		}()
	}
	wg.Wait()
	for _, f := range files[1:] {
		if f != files[0] {
			t.Fatal("concurrent starts got different snapshots")
		}
	}
	seals, err := unix.FcntlInt(files[0].Fd(), unix.F_GET_SEALS, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL; seals&want != want {
		t.Fatalf("seals %#x, want %#x", seals, want)
	}
	if _, err := files[0].WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("the sealed snapshot took a write")
	}
	// the file on disk replaced by garbage after the check: helpers still
	// start from the verified bytes
	file := snapshotFile(t, dir)
	if err := os.WriteFile(file, []byte(snapshotMagic+"garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	renderSome(t, h, true)
	if st := h.Snapshots.Status(); !strings.Contains(st, " built") {
		t.Fatalf("status %q", st)
	}
}

// TestRendererSnapshotNodeRefusesFallsBack: a snapshot file consistent
// in itself (its key and SHA-256 match, as one the user wrote would) but
// whose blob Node does not start from — another snapshot's, built with
// other V8 flags — passes the file's checks; the helper that fails to
// start from it is replaced by one started with the loader, and later
// helpers use the loader, which Status says.
func TestRendererSnapshotNodeRefusesFallsBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	base := testHelper(t)
	other := filepath.Join(t.TempDir(), "other")
	ho := snapshotHelper(t, base, other)
	ho.MemoryMB = 200
	renderSome(t, ho, true)
	b, err := os.ReadFile(snapshotFile(t, other))
	if err != nil {
		t.Fatal(err)
	}
	h := snapshotHelper(t, base, dir)
	forgeSnapshot(t, h, dir, b[len(snapshotMagic)+130:])
	want := renderSome(t, loaderOf(base), false)
	if got := renderSome(t, h, false); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the fallback:\n%#v\nwant\n%#v", got, want)
	}
	if st := h.Snapshots.Status(); !strings.Contains(st, "did not start from the snapshot") {
		t.Fatalf("status %q", st)
	}
	renderSome(t, h, false) // later helpers: the loader at once
}

// plantSized writes good's header (the magic, key and digest lines) as
// file, followed by a blob of n zero bytes (a hole).
func plantSized(file string, good []byte, n int64) error {
	header := int64(len(snapshotMagic)) + 2*65
	if err := os.WriteFile(file, good[:header], 0o600); err != nil {
		return err
	}
	return os.Truncate(file, header+n)
}

// otherFlagsSnapshot is another valid snapshot file of base's bundle and
// Node, built with other V8 flags (a smaller heap bound).
func otherFlagsSnapshot(t *testing.T, base RendererHelper) []byte {
	t.Helper()
	other := filepath.Join(t.TempDir(), "other")
	ho := snapshotHelper(t, base, other)
	ho.MemoryMB = 200
	renderSome(t, ho, true)
	b, err := os.ReadFile(snapshotFile(t, other))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// forgeSnapshot writes blob into dir as h's snapshot file, its key and
// SHA-256 consistent, as a file the user wrote would be.
func forgeSnapshot(t *testing.T, h RendererHelper, dir string, blob []byte) {
	t.Helper()
	key := h.Snapshots.key(h.NodeSHA256, heapFlags(rendererMemory(h)))
	sum := sha256.Sum256(blob)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	forged := append([]byte(snapshotMagic+key+"\n"+hex.EncodeToString(sum[:])+"\n"), blob...)
	if err := os.WriteFile(filepath.Join(dir, "renderer-"+key[:32]+".snapshot"), forged, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReadSnapshotSealsTheVerifiedBytes: a snapshot file read from disk
// comes back as a memory file holding exactly its blob, sealed against
// change; one whose blob was changed on disk (its recorded SHA-256 kept)
// or cut short is refused.
func TestReadSnapshotSealsTheVerifiedBytes(t *testing.T) {
	d := t.TempDir()
	dir, err := os.Open(d)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	key := strings.Repeat("ab", 32)
	blob := make([]byte, 3<<20+17)
	for i := range blob {
		blob[i] = byte(i * 7)
	}
	if err := writeSnapshot(dir, "s.snapshot", key, blob); err != nil {
		t.Fatal(err)
	}
	f, err := openSnapshot(dir, "s.snapshot", key)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := os.ReadFile("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("memory file holds %d bytes (%v), want the %d of the blob", len(got), err, len(blob))
	}
	seals, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
	if want := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL; err != nil || seals&want != want {
		t.Fatalf("seals %#x (%v)", seals, err)
	}
	path := filepath.Join(d, "s.snapshot")
	good, _ := os.ReadFile(path)
	changed := bytes.Clone(good)
	changed[len(changed)-1] ^= 1
	for name, b := range map[string][]byte{"changed": changed, "cut short": good[:len(good)-1], "header only": good[:len(snapshotMagic)+130]} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if f, err := openSnapshot(dir, "s.snapshot", key); err == nil {
			f.Close()
			t.Errorf("%s: accepted", name)
		}
	}
}

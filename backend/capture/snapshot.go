package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/backend/proctree"
	"golang.org/x/sys/unix"
)

// RendererSnapshots makes, keeps and checks the renderer helper's V8
// startup snapshots: the helper bundle (render_helper.js) evaluated and
// warmed on sample output by `node --build-snapshot`, so a helper started
// from it says hello about half as much CPU later than one compiling the
// bundle (docs/benchmarks.md).
//
// A snapshot is code Node runs, so it is made only by the pinned Node
// itself (a blob loads only in the Node that built it), from the embedded
// bundle, on first need, and kept in the cache directory given, one file
// per key: the SHA-256 of the pinned Node's digest, the bundle and the
// V8 flags that shape the heap (a blob built with other flags does not
// load). The file holds the key and the blob's SHA-256 before the blob.
// When it is read, the blob is hashed in memory and only those verified
// bytes are used, copied into a sealed memory file that Node is given as
// /proc/self/fd/3, so no file can be swapped between the check and the
// use. A file that is not a regular file of this user (a symlink, a
// FIFO), is truncated, has another key or a blob that does not hash to
// its recorded SHA-256 is never used: the snapshot is rebuilt over it
// (Status says why). A cache directory that others may write to is
// refused. Whoever can write the user's own cache directory can also
// write a consistent file; that is the user, who can change the pinned
// Node as well. Node itself refuses a blob built by another Node or with
// other flags: a helper that does not start from a snapshot is replaced
// by one started with the loader, which later helpers use too.
//
// When no snapshot can be made or kept, helpers start with the loader
// (rendererLoader) as before, and Status says why. A verified snapshot
// is kept in memory for the life of the RendererSnapshots, so the file
// is read once per process. Safe for concurrent use; a build holds back
// other starts needing the same key until it ends.
type RendererSnapshots struct {
	dir       string
	scriptSum string // SHA-256 of rendererScript

	mu     sync.Mutex
	made   map[string]*snapshotEntry // by key
	status string
}

// snapshotEntry is one key's verified blob (a sealed memory file) or why
// it has none.
type snapshotEntry struct {
	f   *os.File
	err error
}

// Bounds and names of snapshot files.
const (
	// maxSnapshot bounds a blob read or built (today's is about 5 MB).
	maxSnapshot = 64 << 20
	// snapshotMagic starts a snapshot file; the key and the blob's
	// SHA-256 follow, each in hex on a line of its own, then the blob.
	snapshotMagic = "gatehouse renderer snapshot 1\n"
	// snapshotBuildTimeout bounds one build (about 0.5 s of CPU here).
	snapshotBuildTimeout = 2 * time.Minute
)

// NewRendererSnapshots keeps snapshots in dir (made 0700 when missing).
func NewRendererSnapshots(dir string) *RendererSnapshots {
	sum := sha256.Sum256([]byte(rendererScript))
	return &RendererSnapshots{dir: dir, scriptSum: hex.EncodeToString(sum[:]), made: map[string]*snapshotEntry{}}
}

// Status says how the last helper start needing a snapshot went: which
// snapshot was used, built or rebuilt (and why), or why the loader was
// used instead. Empty before the first start.
func (c *RendererSnapshots) Status() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Prepare makes sure the snapshot for helpers run as h is ready, building
// it now when needed (the app calls it in the background when it starts,
// `gatehouse doctor` to report it); the error says why helpers would use
// the loader.
func (c *RendererSnapshots) Prepare(h RendererHelper) error {
	_, err := c.blob(h, heapFlags(rendererMemory(h)))
	return err
}

// heapFlags are the V8 flags of every helper run with mem MB of heap;
// they are part of a snapshot's key.
func heapFlags(mem int) []string {
	// a 1 MB young generation keeps the helper's resident set about 6 MB
	// smaller on 10 MB of output, and no slower
	return []string{"--max-old-space-size=" + strconv.Itoa(mem), "--max-semi-space-size=1"}
}

// key names the snapshot of the bundle built by the Node of digest
// nodeSum with flags.
func (c *RendererSnapshots) key(nodeSum string, flags []string) string {
	sum := sha256.Sum256([]byte(snapshotMagic + nodeSum + "\n" + c.scriptSum + "\n" + strings.Join(flags, "\n")))
	return hex.EncodeToString(sum[:])
}

// blob returns the verified snapshot for helpers run as h with flags, as
// a sealed memory file (kept open by c), loading or building it first.
func (c *RendererSnapshots) blob(h RendererHelper, flags []string) (*os.File, error) {
	if len(h.NodeSHA256) != 64 {
		return nil, c.note(errors.New("no startup snapshot: the pinned Node's SHA-256 was not given"))
	}
	key := c.key(h.NodeSHA256, flags)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.made[key]; e != nil {
		return e.f, e.err
	}
	f, how, err := c.loadOrBuild(h, flags, key)
	c.made[key] = &snapshotEntry{f, err}
	if err != nil {
		c.status = "the renderer helper starts without a startup snapshot (slower): " + err.Error()
	} else {
		c.status = how
	}
	return f, err
}

// drop makes helpers run as h with flags use the loader from now on,
// since one did not start from the snapshot (err says how it failed).
func (c *RendererSnapshots) drop(h RendererHelper, flags []string, err error) {
	key := c.key(h.NodeSHA256, flags)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.made[key] = &snapshotEntry{err: fmt.Errorf("a helper did not start from the snapshot: %w", err)}
	c.status = "the renderer helper starts without a startup snapshot (slower): " + c.made[key].err.Error()
}

// note records err as the status and returns it.
func (c *RendererSnapshots) note(err error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.status = "the renderer helper starts without a startup snapshot (slower): " + err.Error()
	return err
}

// loadOrBuild reads key's file, or builds the snapshot (and writes the
// file) when there is none usable; how says which happened.
func (c *RendererSnapshots) loadOrBuild(h RendererHelper, flags []string, key string) (*os.File, string, error) {
	dir, err := openCacheDir(c.dir)
	if err != nil {
		return nil, "", err
	}
	defer dir.Close()
	name := "renderer-" + key[:32] + ".snapshot"
	f, err := readSnapshot(dir, name, key)
	why := ""
	switch {
	case err == nil:
		return f, "startup snapshot " + name + " verified (SHA-256 of its blob matches)", nil
	case errors.Is(err, os.ErrNotExist):
		why = "built"
	default:
		why = "rebuilt (" + err.Error() + ")"
	}
	blob, err := buildSnapshot(h, flags)
	if err != nil {
		return nil, "", err
	}
	f, err = sealedFile("gatehouse-renderer-snapshot", blob)
	if err != nil {
		return nil, "", err
	}
	// it must start a helper before it is kept: a blob Node cannot load
	// (another Node at the pinned path) is not written
	if err := tryBlob(h, f, flags); err != nil {
		f.Close()
		return nil, "", err
	}
	how := "startup snapshot " + name + " " + why
	if err := writeSnapshot(dir, name, key, blob); err != nil {
		how += "; kept in memory only: " + err.Error()
	} else {
		pruneSnapshots(dir, name, time.Now().Add(-staleSnapshot))
	}
	return f, how, nil
}

// buildSnapshot runs `node FLAGS --snapshot-blob OUT --build-snapshot
// BUNDLE` with the bundle and OUT memory files of this process (the
// build never writes a path), owned by h.Supervisor, and returns the blob.
func buildSnapshot(h RendererHelper, flags []string) ([]byte, error) {
	if h.Supervisor == nil {
		return nil, errors.New("no startup snapshot: no process supervisor")
	}
	script, err := sealedFile("gatehouse-renderer-script", []byte(rendererScript))
	if err != nil {
		return nil, fmt.Errorf("snapshot build: %w", err)
	}
	defer script.Close()
	fd, err := unix.MemfdCreate("gatehouse-renderer-snapshot-build", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL)
	if err != nil {
		fd, err = unix.MemfdCreate("gatehouse-renderer-snapshot-build", unix.MFD_CLOEXEC)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot build: memfd_create: %w", err)
	}
	out := os.NewFile(uintptr(fd), "gatehouse-renderer-snapshot-build")
	defer out.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("snapshot build: %w", err)
	}
	defer null.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("snapshot build: %w", err)
	}
	marker := "GATEHOUSE_RENDERER_SNAPSHOT=" + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 36)
	args := append([]string{h.Node}, flags...)
	args = append(args, "--snapshot-blob", "/proc/self/fd/4", "--build-snapshot", "/proc/self/fd/3")
	tree, err := h.Supervisor.Start(proctree.Spec{Path: h.Node, Args: args,
		Env: []string{marker, "NODE_OPTIONS=", "NODE_PATH="}, Dir: "/",
		Files: []*os.File{null, null, errW, script, out}, Marker: marker})
	errW.Close()
	if err != nil {
		errR.Close()
		return nil, fmt.Errorf("snapshot build: start the pinned Node: %w", err)
	}
	stderr := &tailBuffer{max: 4096}
	copied := make(chan struct{})
	go func() { io.Copy(stderr, errR); errR.Close(); close(copied) }() //nolint:errcheck // only kept for error messages
	select {
	case <-tree.Exited():
	case <-time.After(snapshotBuildTimeout):
	}
	tree.Terminate(100 * time.Millisecond)
	<-copied
	if code, sig := tree.ExitStatus(); code != 0 || sig != "" {
		return nil, fmt.Errorf("snapshot build: node ended with status %d%s: %s", code, sig, strictText(strings.TrimSpace(stderr.String())))
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("snapshot build: %w", err)
	}
	if st.Size <= 0 || st.Size > maxSnapshot {
		return nil, fmt.Errorf("snapshot build: node wrote a blob of %d bytes", st.Size)
	}
	blob := make([]byte, st.Size)
	if _, err := out.ReadAt(blob, 0); err != nil {
		return nil, fmt.Errorf("snapshot build: read the blob: %w", err)
	}
	return blob, nil
}

// tryBlob starts one helper from blob and ends it after its hello.
func tryBlob(h RendererHelper, blob *os.File, flags []string) error {
	s, err := startScreenFrom(h, aheadTerminal, blob, flags)
	if err != nil {
		return fmt.Errorf("the snapshot built does not start: %w", err)
	}
	s.close()
	return nil
}

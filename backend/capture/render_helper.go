package capture

import (
	"bufio"
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"golang.org/x/sys/unix"
)

// rendererScript is the renderer helper: @xterm/headless and the frames
// of frontend/renderer/screen.mjs bundled into one CommonJS script from
// frontend/renderer/helper.mjs (`make renderer`; TestRendererBundleIsCurrent
// keeps it current). Its protocol is described there.
//
//go:embed render_helper.js
var rendererScript string

// rendererLoader is the program node runs: it compiles the script read
// from descriptor 3 as a CommonJS module, so the script is never a file
// anyone else could replace.
const rendererLoader = `const M=require("module");const m=new M("gatehouse-renderer");` +
	`m.filename="gatehouse-renderer.js";m._compile(require("fs").readFileSync(3,"utf8"),"gatehouse-renderer.js")`

// RendererHelper says how to run the renderer helper: the pinned Node
// and the Supervisor that owns the helper's process (its own tree, ended
// with the renderer). MemoryMB bounds the helper's JavaScript heap
// (0: DefaultRendererMemoryMB) and Timeout each answer it owes (0:
// DefaultRendererTimeout); past either, the renderer fails with an error
// saying so.
type RendererHelper struct {
	Node       string
	Supervisor *proctree.Supervisor
	MemoryMB   int
	Timeout    time.Duration
}

// Bounds of the renderer helper.
const (
	// DefaultRendererMemoryMB is the helper's default heap bound, enough
	// for a 1000×1000 screen with 1000 rows of scrollback.
	DefaultRendererMemoryMB = 256
	// DefaultRendererTimeout bounds the wait for one answer of the helper.
	DefaultRendererTimeout = 30 * time.Second
	// maxRendererMessage bounds one message read from the helper: a
	// 1000×1000 screen's rows and serialized state.
	maxRendererMessage = 64 << 20
	// maxChunkMessage bounds one message written to it (the helper's own
	// limit is 16 MiB).
	maxChunkMessage = 1 << 20
	// writeMessage is the size of the output messages: within one pipe
	// read of the helper, so it never joins the pieces of a large message
	// (a 256 KiB one raised its resident set by about 10 MB).
	writeMessage = 32 << 10
)

// minColumns is xterm.js's smallest column count: a narrower terminal is
// rendered this wide (session.go records the limitation).
const minColumns = 2

// screen is a screen rendered by xterm.js in the renderer helper.
// Writes and resizes are queued and sent without waiting, together with
// the snapshot that follows them (or once 1 MiB is queued); a snapshot
// waits for the frame of everything sent before it. It is used by one
// goroutine.
type screen struct {
	tree     *proctree.Tree
	in       *os.File      // the helper's stdin
	out      *bufio.Reader // its stdout
	outFile  *os.File
	stderr   *tailBuffer
	timeout  time.Duration
	memoryMB int
	queued   []byte // messages not yet written (send)
	// Version is what the helper said it runs.
	version string
	err     error // sticky: set once the helper failed
	closed  bool
}

// startScreen starts the renderer helper for a screen of t's size.
func startScreen(h RendererHelper, t Terminal) (*screen, error) {
	if h.Supervisor == nil || !filepath.IsAbs(h.Node) {
		return nil, errors.New("capture: the renderer needs the pinned Node (an absolute path) and a process supervisor")
	}
	mem, timeout := h.MemoryMB, h.Timeout
	if mem <= 0 {
		mem = DefaultRendererMemoryMB
	}
	if timeout <= 0 {
		timeout = DefaultRendererTimeout
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("capture: renderer pipe: %w", err)
	}
	growPipe(inW, maxChunkMessage)
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("capture: renderer pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("capture: renderer pipe: %w", err)
	}
	srcR, srcW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("capture: renderer pipe: %w", err)
	}
	marker := "GATEHOUSE_RENDERER=" + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 36)
	tree, err := h.Supervisor.Start(proctree.Spec{
		Path: h.Node,
		// a 1 MB young generation keeps the helper's resident set about
		// 6 MB smaller on 10 MB of output, and no slower
		Args: []string{h.Node, "--max-old-space-size=" + strconv.Itoa(mem), "--max-semi-space-size=1", "-e", rendererLoader, "--",
			strconv.Itoa(t.Columns), strconv.Itoa(t.Rows), strconv.Itoa(t.Scrollback)},
		Env:   []string{marker, "NODE_OPTIONS=", "NODE_PATH="},
		Dir:   "/",
		Files: []*os.File{inR, outW, errW, srcR}, Marker: marker,
	})
	closeAll(inR, outW, errW, srcR)
	if err != nil {
		closeAll(inW, outR, errR, srcW)
		return nil, fmt.Errorf("capture: start the renderer helper: %w", err)
	}
	go func() { // the script, then EOF; a helper that died early makes this fail, which Wait reports
		io.WriteString(srcW, rendererScript) //nolint:errcheck // see above
		srcW.Close()
	}()
	s := &screen{tree: tree, in: inW, out: bufio.NewReaderSize(outR, 64<<10), outFile: outR, stderr: &tailBuffer{max: 4096}, timeout: timeout, memoryMB: mem}
	go func() { io.Copy(s.stderr, errR); errR.Close() }() //nolint:errcheck // only kept for error messages
	typ, hello, err := s.read()
	if err == nil && typ != 'h' {
		err = fmt.Errorf("answered %q before its hello", typ)
	}
	if err != nil {
		s.close()
		return nil, s.fail(err)
	}
	s.version = string(hello)
	return s, nil
}

// growPipe asks for a pipe of size bytes behind f. The helper's input
// pipe holds one whole batch of flush (maxChunkMessage), so the helper
// parses a batch without waiting for the capture to be scheduled again
// for every 64 KiB (Linux's default capacity); on a busy machine each of
// those waits is a scheduler slice. Failing is only slower (a smaller
// fs.pipe-max-size, or the user's pipe quota spent): the error is ignored.
func growPipe(f *os.File, size int) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, size) }) //nolint:errcheck // see above
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		f.Close()
	}
}

// fail makes err the screen's sticky error, worded for the record.
func (s *screen) fail(err error) error {
	if s.err == nil {
		msg := err.Error()
		switch tail := strings.TrimSpace(s.stderr.String()); {
		case strings.Contains(tail, "heap out of memory"):
			msg += fmt.Sprintf(": it exceeded its %d MB memory bound", s.memoryMB)
		case tail != "":
			msg += " (its stderr: " + strconv.Quote(strictjson.Truncate(tail, 500)) + ")"
		}
		s.err = errors.New("the terminal renderer (xterm.js helper) failed: " + msg)
	}
	return s.err
}

// send queues one message; messages go out together (one write, one wake
// of the helper) when a snapshot needs them, when maxChunkMessage bytes
// are queued, or at close.
func (s *screen) send(typ byte, payload []byte) error {
	if s.err != nil {
		return s.err
	}
	var hdr [5]byte
	hdr[0] = typ
	binary.LittleEndian.PutUint32(hdr[1:], uint32(len(payload)))
	s.queued = append(append(s.queued, hdr[:]...), payload...)
	if len(s.queued) >= maxChunkMessage {
		return s.flush()
	}
	return nil
}

// flush writes the queued messages.
func (s *screen) flush() error {
	if s.err != nil || len(s.queued) == 0 {
		return s.err
	}
	s.in.SetWriteDeadline(time.Now().Add(s.timeout)) //nolint:errcheck // pipes support deadlines
	_, err := s.in.Write(s.queued)
	s.queued = s.queued[:0]
	if cap(s.queued) > 2*maxChunkMessage+16 { // do not keep a large buffer
		s.queued = nil
	}
	if err != nil {
		return s.fail(fmt.Errorf("writing to it: %w", err))
	}
	return nil
}

// read reads one message from the helper within the timeout.
func (s *screen) read() (byte, []byte, error) {
	s.outFile.SetReadDeadline(time.Now().Add(s.timeout)) //nolint:errcheck // pipes support deadlines
	var hdr [5]byte
	if _, err := io.ReadFull(s.out, hdr[:]); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, nil, fmt.Errorf("it did not answer within %v", s.timeout)
		}
		return 0, nil, fmt.Errorf("it ended (%v)", err)
	}
	n := binary.LittleEndian.Uint32(hdr[1:])
	if n > maxRendererMessage {
		return 0, nil, fmt.Errorf("it sent a message of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(s.out, b); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, nil, fmt.Errorf("it did not answer within %v", s.timeout)
		}
		return 0, nil, fmt.Errorf("it ended inside a message (%v)", err)
	}
	if hdr[0] == 'e' {
		return 0, nil, errors.New(strictText(string(b)))
	}
	return hdr[0], b, nil
}

// strictText is s with control characters escaped, for error messages.
func strictText(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// write sends b as terminal output, in messages of at most
// writeMessage bytes.
func (s *screen) write(b []byte) error { return writeText(s, b) }

// writeString is write for text, without converting it first.
func (s *screen) writeString(text string) error { return writeText(s, text) }

func writeText[T string | []byte](s *screen, b T) error {
	for len(b) > 0 {
		if s.err != nil {
			return s.err
		}
		n := min(len(b), writeMessage)
		var hdr [5]byte
		hdr[0] = 'w'
		binary.LittleEndian.PutUint32(hdr[1:], uint32(n))
		s.queued = append(append(s.queued, hdr[:]...), b[:n]...)
		if len(s.queued) >= maxChunkMessage {
			if err := s.flush(); err != nil {
				return err
			}
		}
		b = b[n:]
	}
	return s.err
}

// resize changes the screen size (after the output sent before).
func (s *screen) resize(columns, rows int) error {
	var p [4]byte
	binary.LittleEndian.PutUint16(p[0:], uint16(columns))
	binary.LittleEndian.PutUint16(p[2:], uint16(rows))
	return s.send('r', p[:])
}

// reset replaces the helper's terminal with a fresh one of t's size,
// after the output sent before (nothing of the old one remains).
func (s *screen) reset(t Terminal) error {
	var p [8]byte
	binary.LittleEndian.PutUint16(p[0:], uint16(t.Columns))
	binary.LittleEndian.PutUint16(p[2:], uint16(t.Rows))
	binary.LittleEndian.PutUint32(p[4:], uint32(t.Scrollback))
	return s.send('n', p[:])
}

// snapshot returns the screen once everything sent before is parsed.
func (s *screen) snapshot() (RenderedFrame, error) {
	if err := s.send('s', nil); err != nil {
		return RenderedFrame{}, err
	}
	if err := s.flush(); err != nil {
		return RenderedFrame{}, err
	}
	typ, b, err := s.read()
	if err == nil && typ != 'f' {
		err = fmt.Errorf("answered %q to a snapshot", typ)
	}
	if err != nil {
		return RenderedFrame{}, s.fail(err)
	}
	f, err := decodeFrame(b)
	if err != nil {
		return RenderedFrame{}, s.fail(err)
	}
	return f, nil
}

// decodeFrame reads the helper's binary frame message (helper.mjs: the
// size, the cursor, the active buffer, every row's text and the
// serialized state, the texts as u32 length and UTF-8 bytes). Anything
// else — a short or long message, a zero size, a row count that is not
// the frame's, text that is not UTF-8 — is an error.
func decodeFrame(b []byte) (RenderedFrame, error) {
	if len(b) < 9 {
		return RenderedFrame{}, fmt.Errorf("its frame is %d bytes long", len(b))
	}
	f := RenderedFrame{
		Columns: int(binary.LittleEndian.Uint16(b[0:])), Rows: int(binary.LittleEndian.Uint16(b[2:])),
		CursorX: int(binary.LittleEndian.Uint16(b[4:])), CursorY: int(binary.LittleEndian.Uint16(b[6:])),
		ActiveBuffer: BufferNormal,
	}
	switch b[8] {
	case 0:
	case 1:
		f.ActiveBuffer = BufferAlternate
	default:
		return RenderedFrame{}, fmt.Errorf("its frame names buffer %d", b[8])
	}
	if f.Columns < 1 || f.Rows < 1 {
		return RenderedFrame{}, fmt.Errorf("its frame is %dx%d", f.Columns, f.Rows)
	}
	rest := b[9:]
	// text reads the next text: row i, or the serialized state (i < 0)
	text := func(i int) (string, error) {
		what := "the serialized state"
		if i >= 0 {
			what = "row " + strconv.Itoa(i)
		}
		if len(rest) < 4 {
			return "", fmt.Errorf("its frame ends before %s", what)
		}
		n := binary.LittleEndian.Uint32(rest)
		if uint64(n) > uint64(len(rest)-4) {
			return "", fmt.Errorf("its frame ends inside %s", what)
		}
		t := rest[4 : 4+n]
		rest = rest[4+n:]
		if !utf8.Valid(t) {
			return "", fmt.Errorf("its frame's %s is not UTF-8", what)
		}
		return string(t), nil
	}
	// every row takes at least its 4-byte length: a row count the
	// message cannot hold fails before anything is allocated for it
	if f.Rows > len(rest)/4 {
		return RenderedFrame{}, fmt.Errorf("its frame is %dx%d with fewer rows", f.Columns, f.Rows)
	}
	f.Lines = make([]string, f.Rows)
	for i := range f.Lines {
		l, err := text(i)
		if err != nil {
			return RenderedFrame{}, err
		}
		f.Lines[i] = l
	}
	st, err := text(-1)
	if err != nil {
		return RenderedFrame{}, err
	}
	if len(rest) != 0 {
		return RenderedFrame{}, fmt.Errorf("its frame has %d bytes after the serialized state", len(rest))
	}
	f.SerializedState = st
	return f, nil
}

// fastStats is what the helper's fast-forward did (frontend/renderer/
// fastforward.mjs): the bytes it skipped and how often it cut a run.
type fastStats struct {
	Skipped int64 `json:"skipped"`
	Cuts    int64 `json:"cuts"`
}

// stats asks the helper what its fast-forward did so far.
func (s *screen) stats() (fastStats, error) {
	if err := s.send('k', nil); err != nil {
		return fastStats{}, err
	}
	if err := s.flush(); err != nil {
		return fastStats{}, err
	}
	typ, b, err := s.read()
	if err == nil && typ != 'k' {
		err = fmt.Errorf("answered %q to a statistics request", typ)
	}
	if err != nil {
		return fastStats{}, s.fail(err)
	}
	var st fastStats
	if err := json.Unmarshal(b, &st); err != nil {
		return fastStats{}, s.fail(fmt.Errorf("its statistics are not JSON: %v", err))
	}
	return st, nil
}

// close ends the helper: stdin is closed so it exits on its own, and
// after a short grace its tree is terminated and released either way.
func (s *screen) close() {
	if s.closed {
		return
	}
	s.closed = true
	s.flush() //nolint:errcheck // a failed helper is ended below either way
	s.in.Close()
	select {
	case <-s.tree.Exited():
	case <-time.After(2 * time.Second):
	}
	s.tree.Terminate(100 * time.Millisecond)
	s.outFile.Close()
}

// tailBuffer keeps the first max bytes written to it (the helper's
// stderr, for error messages).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - len(t.b); room > 0 {
		t.b = append(t.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

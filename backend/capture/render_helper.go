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
//
// With Snapshots and NodeSHA256 (the pinned Node's digest) set, the
// helper starts from a verified V8 startup snapshot of itself
// (RendererSnapshots), made at first need; without them, or when no
// snapshot can be made, it compiles the bundle at every start (the
// loader), which takes about twice the CPU before its hello.
type RendererHelper struct {
	Node       string
	Supervisor *proctree.Supervisor
	MemoryMB   int
	Timeout    time.Duration
	NodeSHA256 string
	Snapshots  *RendererSnapshots
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
//
// It is pipelined: writes, resizes and snapshot requests are queued and
// handed to a writer goroutine without waiting (together with the
// request that follows them, or once 1 MiB is queued), and a reader
// goroutine reads the helper's answers as they come, so the goroutine
// using the screen never waits on the helper unless it asks to
// (snapshot, stats, next). Answers come in the order of the requests.
// Every answer owed is bounded by the timeout, counted from the request
// or from the answer before it. Queued text is not copied: messages
// refer to the caller's strings until they are written. A screen is used
// by one goroutine.
type screen struct {
	tree     *proctree.Tree
	in       *os.File // the helper's stdin (the writer goroutine's)
	outFile  *os.File // its stdout (the reader goroutine's)
	stderr   *tailBuffer
	timeout  time.Duration
	memoryMB int

	queued      []message // messages not yet handed to the writer (send)
	queuedBytes int
	writes      chan []message // batches for the writer goroutine
	writerDone  chan struct{}
	answers     chan answer   // the helper's messages after its hello, from the reader goroutine
	hello       chan answer   // its first message (or why none came), from the reader goroutine
	said        bool          // the hello was taken (greet)
	done        chan struct{} // closed by close: the reader stops
	readerDone  chan struct{} // closed when the reader goroutine returned
	waiting     int           // answers requested and not yet taken (the hello not counted)

	// restart, set for a helper started from its startup snapshot
	// without waiting for its hello (launchScreen), replaces the helper
	// by one started with the loader when the snapshot's fails its hello.
	restart func(cause error) error

	mu       sync.Mutex // owed and the read deadline
	owed     int        // answers the reader has not read yet
	deadline time.Duration
	writeErr error // the writer's first error (under mu)

	// version is what the helper said it runs; fromSnapshot, that it
	// started from its startup snapshot.
	version      string
	fromSnapshot bool
	err          error // sticky: set once the helper failed
	closed       bool
	retired      bool             // retire closed its input: it is exiting
	stale        []*proctree.Tree // helpers replaced after a failed hello (detach), terminated by end

	ff fastForward // the fast-forward (render_fastforward.go)
}

// message is one message to the helper: its type and payload, and for
// output ('w') the length of the payload's plain prefix (plainPrefix),
// written before the payload.
type message struct {
	typ     byte
	payload string
	plain   int
}

// answer is one message read from the helper, or why none could be.
type answer struct {
	typ     byte
	payload []byte
	err     error
}

// writeBatches bounds the batches queued for the writer goroutine;
// past it the screen's user waits for the helper (a batch holds up to
// maxChunkMessage bytes of text, or a request).
const writeBatches = 256

// startScreen starts the renderer helper for a screen of t's size and
// waits for its hello: from its startup snapshot when h has one (see
// RendererHelper), else with the loader.
func startScreen(h RendererHelper, t Terminal) (*screen, error) {
	flags, blob, err := helperStart(h)
	if err != nil {
		return nil, err
	}
	s, err := startScreenFrom(h, t, blob, flags)
	if err != nil && blob != nil {
		// a snapshot Node does not start from (one verified, but of
		// another Node or other flags) is dropped: this and later helpers
		// use the loader, and Status says why
		h.Snapshots.drop(h, flags, err)
		return startScreenFrom(h, t, nil, flags)
	}
	return s, err
}

// helperStart checks that h can start a helper and returns its V8 flags
// and its verified startup snapshot (nil: the loader, and h.Snapshots'
// Status says why).
func helperStart(h RendererHelper) ([]string, *os.File, error) {
	if h.Supervisor == nil || !filepath.IsAbs(h.Node) {
		return nil, nil, errors.New("capture: the renderer needs the pinned Node (an absolute path) and a process supervisor")
	}
	flags := heapFlags(rendererMemory(h))
	var blob *os.File
	if h.Snapshots != nil {
		blob, _ = h.Snapshots.blob(h, flags) // without one, the loader (Status says why)
	}
	return flags, blob, nil
}

// rendererMemory is h's heap bound in MB.
func rendererMemory(h RendererHelper) int {
	if h.MemoryMB <= 0 {
		return DefaultRendererMemoryMB
	}
	return h.MemoryMB
}

// startScreenFrom starts the helper with V8 flags, from blob (a sealed
// memory file holding its startup snapshot) or, when blob is nil, with
// the loader, and waits for its hello.
func startScreenFrom(h RendererHelper, t Terminal, blob *os.File, flags []string) (*screen, error) {
	s, err := spawnScreen(h, t, blob, flags)
	if err != nil {
		return nil, err
	}
	if err := s.awaitHello(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// launchScreen starts the helper as startScreen does but returns without
// waiting for its hello, which comes while the caller works (helloC,
// greet; next waits for it): what can be known before the helper runs —
// the pinned Node given, the snapshot verified or the loader chosen, the
// process started — is known when it returns. Until the hello, what is
// sent stays queued (messages refer to the caller's strings), so a
// helper started from a snapshot it fails to start from is replaced by
// one started with the loader (the snapshot dropped, as startScreen does)
// and given everything queued, the same stream.
func launchScreen(h RendererHelper, t Terminal) (*screen, error) {
	flags, blob, err := helperStart(h)
	if err != nil {
		return nil, err
	}
	s, err := spawnScreen(h, t, blob, flags)
	if err != nil && blob != nil {
		h.Snapshots.drop(h, flags, err)
		return spawnScreen(h, t, nil, flags)
	}
	if err != nil {
		return nil, err
	}
	if blob != nil {
		s.restart = func(cause error) error {
			h.Snapshots.drop(h, flags, cause)
			s.detach()
			if err := s.attach(h, t, nil, flags); err != nil {
				return err
			}
			for range s.waiting { // the requests queued meanwhile
				s.owe()
			}
			return nil
		}
	}
	return s, nil
}

// spawnScreen starts the helper process of a new screen (attach); its
// hello is owed.
func spawnScreen(h RendererHelper, t Terminal, blob *os.File, flags []string) (*screen, error) {
	if h.Supervisor == nil || !filepath.IsAbs(h.Node) {
		return nil, errors.New("capture: the renderer needs the pinned Node (an absolute path) and a process supervisor")
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultRendererTimeout
	}
	s := &screen{timeout: timeout, memoryMB: rendererMemory(h)}
	s.ff.fresh(t) // once: a helper restarted with the loader is given the same stream
	if err := s.attach(h, t, blob, flags); err != nil {
		return nil, err
	}
	return s, nil
}

// attach starts a helper process for s (from blob, or with the loader
// when blob is nil) and its reader and writer goroutines; the hello is
// the first answer owed. s has no helper process running when called.
func (s *screen) attach(h RendererHelper, t Terminal, blob *os.File, flags []string) error {
	inR, inW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("capture: renderer pipe: %w", err)
	}
	growPipe(inW, maxChunkMessage)
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return fmt.Errorf("capture: renderer pipe: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return fmt.Errorf("capture: renderer pipe: %w", err)
	}
	// descriptor 3: the snapshot (Node opens it by its /proc path, a
	// description of its own), or the script the loader reads
	args := append([]string{h.Node}, flags...)
	fd3, srcW := blob, (*os.File)(nil)
	if blob != nil {
		args = append(args, "--snapshot-blob", "/proc/self/fd/3")
	} else {
		if fd3, srcW, err = os.Pipe(); err != nil {
			closeAll(inR, inW, outR, outW, errR, errW)
			return fmt.Errorf("capture: renderer pipe: %w", err)
		}
		args = append(args, "-e", rendererLoader)
	}
	args = append(args, "--", strconv.Itoa(t.Columns), strconv.Itoa(t.Rows), strconv.Itoa(t.Scrollback))
	marker := "GATEHOUSE_RENDERER=" + strconv.Itoa(os.Getpid()) + "." + strconv.FormatInt(time.Now().UnixNano(), 36)
	tree, err := h.Supervisor.Start(proctree.Spec{
		Path: h.Node, Args: args,
		Env:   []string{marker, "NODE_OPTIONS=", "NODE_PATH="},
		Dir:   "/",
		Files: []*os.File{inR, outW, errW, fd3}, Marker: marker,
	})
	closeAll(inR, outW, errW)
	if srcW != nil {
		fd3.Close()
	}
	if err != nil {
		closeAll(inW, outR, errR)
		if srcW != nil {
			srcW.Close()
		}
		return fmt.Errorf("capture: start the renderer helper: %w", err)
	}
	if srcW != nil {
		go func() { // the script, then EOF; a helper that died early makes this fail, which Wait reports
			io.WriteString(srcW, rendererScript) //nolint:errcheck // see above
			srcW.Close()
		}()
	}
	stderr := &tailBuffer{max: 4096}
	s.tree, s.in, s.outFile, s.stderr, s.fromSnapshot = tree, inW, outR, stderr, blob != nil
	s.writes, s.writerDone = make(chan []message, writeBatches), make(chan struct{})
	s.answers, s.hello = make(chan answer, 16), make(chan answer, 1)
	s.done, s.readerDone = make(chan struct{}), make(chan struct{})
	s.owed, s.writeErr = 0, nil
	go func() { io.Copy(stderr, errR); errR.Close() }() //nolint:errcheck // only kept for error messages
	s.owe()                                             // the hello
	go s.writeLoop()
	go s.readLoop(bufio.NewReaderSize(outR, 64<<10))
	return nil
}

// awaitHello waits for the helper's hello (the reader's deadline bounds
// the wait) and takes it (greet).
func (s *screen) awaitHello() error {
	if s.said || s.err != nil {
		return s.err
	}
	return s.greet(<-s.hello)
}

// helloC is the channel the helper's hello comes on, nil once it was
// taken or the screen failed (for a select; give what it gives to greet).
func (s *screen) helloC() <-chan answer {
	if s.said || s.err != nil {
		return nil
	}
	return s.hello
}

// greet takes the helper's first message a: its hello, naming the
// version it runs, after which what was queued is handed to the writer.
// Anything else — an error, an end, a timeout, another message — fails
// the screen (after the one restart with the loader of a helper started
// from a snapshot, launchScreen).
func (s *screen) greet(a answer) error {
	err := a.err
	if err == nil && a.typ != 'h' {
		err = fmt.Errorf("answered %q before its hello", a.typ)
	}
	if err == nil {
		s.said, s.version = true, string(a.payload)
		return s.flush()
	}
	if restart := s.restart; restart != nil {
		s.restart = nil
		if rerr := restart(err); rerr != nil {
			return s.fail(rerr)
		}
		return s.greet(<-s.hello)
	}
	return s.fail(err)
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

// send queues one message; messages go to the writer together when a
// request needs them, when maxChunkMessage bytes are queued, or at close.
func (s *screen) send(typ byte, payload []byte) error {
	return s.queue(typ, string(payload))
}

func (s *screen) queue(typ byte, payload string) error {
	return s.queueMessage(message{typ: typ, payload: payload})
}

func (s *screen) queueMessage(m message) error {
	if s.err != nil {
		return s.err
	}
	if s.retired {
		return s.fail(errors.New("it was ended before this message"))
	}
	s.queued = append(s.queued, m)
	s.queuedBytes += 9 + len(m.payload)
	if s.queuedBytes >= maxChunkMessage {
		return s.flush()
	}
	return nil
}

// flush hands the queued messages to the writer goroutine (waiting when
// writeBatches batches are already queued).
func (s *screen) flush() error {
	if s.err != nil || len(s.queued) == 0 || !s.said {
		return s.err // before the hello, what is queued stays queued (greet)
	}
	batch := s.queued
	s.queued, s.queuedBytes = nil, 0
	select {
	case s.writes <- batch:
		return nil
	case <-time.After(s.timeout):
		return s.fail(fmt.Errorf("it did not read its input within %v", s.timeout))
	}
}

// writeLoop writes the batches in order; after a failed write it only
// drains them (the reader then sees the helper end, or time out). It
// closes the helper's stdin at the end, which ends the helper.
func (s *screen) writeLoop() {
	defer close(s.writerDone)
	defer s.in.Close()
	w := bufio.NewWriterSize(deadlineWriter{s}, 64<<10)
	failed := false
	for batch := range s.writes {
		if failed {
			continue
		}
		for _, m := range batch {
			var hdr [9]byte
			hdr[0] = m.typ
			n := 5
			if m.typ == 'w' { // the plain prefix's length first (helper.mjs)
				binary.LittleEndian.PutUint32(hdr[5:], uint32(m.plain))
				n = 9
			}
			binary.LittleEndian.PutUint32(hdr[1:], uint32(n-5+len(m.payload)))
			w.Write(hdr[:n])         //nolint:errcheck // bufio keeps the first error; Flush returns it
			w.WriteString(m.payload) //nolint:errcheck // see above
		}
		if err := w.Flush(); err != nil {
			s.mu.Lock()
			s.writeErr = err
			s.mu.Unlock()
			failed = true
		}
	}
}

// deadlineWriter writes to the helper's stdin within the timeout.
type deadlineWriter struct{ s *screen }

func (d deadlineWriter) Write(p []byte) (int, error) {
	d.s.mu.Lock()
	timeout := d.s.timeout
	d.s.mu.Unlock()
	d.s.in.SetWriteDeadline(time.Now().Add(timeout)) //nolint:errcheck // pipes support deadlines
	return d.s.in.Write(p)
}

// owe notes one more answer the helper owes; the reader's deadline runs
// from now when it owed none.
func (s *screen) owe() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owed == 0 {
		s.deadline = s.timeout
		s.outFile.SetReadDeadline(time.Now().Add(s.timeout)) //nolint:errcheck // pipes support deadlines
	}
	s.owed++
}

// answered notes one answer read: the deadline of the next one owed runs
// from now, and none runs while nothing is owed.
func (s *screen) answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owed > 0 {
		s.owed--
	}
	if s.owed > 0 {
		s.outFile.SetReadDeadline(time.Now().Add(s.deadline)) //nolint:errcheck // pipes support deadlines
	} else {
		s.outFile.SetReadDeadline(time.Time{}) //nolint:errcheck // see above
	}
}

// readLoop reads the helper's messages and hands them over in order,
// until one cannot be read (the last answer is then that error).
func (s *screen) readLoop(out *bufio.Reader) {
	answers, hello, done := s.answers, s.hello, s.done
	defer close(s.readerDone)
	for {
		typ, b, err := s.read(out)
		if err == nil {
			s.answered()
		}
		ch := answers
		if hello != nil { // the first message (buffered: never waits)
			ch, hello = hello, nil
		}
		select {
		case ch <- answer{typ, b, err}:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}

// read reads one message from the helper.
func (s *screen) read(out *bufio.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(out, hdr[:]); err != nil {
		return 0, nil, s.readErr(err, "it ended (%v)")
	}
	n := binary.LittleEndian.Uint32(hdr[1:])
	if n > maxRendererMessage {
		return 0, nil, fmt.Errorf("it sent a message of %d bytes", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(out, b); err != nil {
		return 0, nil, s.readErr(err, "it ended inside a message (%v)")
	}
	if hdr[0] == 'e' {
		return 0, nil, errors.New(strictText(string(b)))
	}
	return hdr[0], b, nil
}

// readErr words a failed read: a timeout, or the helper's end (with the
// writer's error, when writing failed first).
func (s *screen) readErr(err error, ended string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("it did not answer within %v", s.deadline)
	}
	if s.writeErr != nil {
		return fmt.Errorf("writing to it: %w; "+ended, s.writeErr, err)
	}
	return fmt.Errorf(ended, err)
}

// request queues a message the helper answers and hands everything
// queued to the writer.
func (s *screen) request(typ byte) error {
	if err := s.send(typ, nil); err != nil {
		return err
	}
	s.waiting++
	s.owe()
	return s.flush()
}

// answerC is the channel the next answer comes on, nil when none is
// owed or the screen failed (for a select; take what it gives to take).
func (s *screen) answerC() <-chan answer {
	if s.waiting == 0 || s.err != nil || !s.said {
		return nil
	}
	return s.answers
}

// take takes answer a, received from answerC.
func (s *screen) take(a answer) (byte, []byte, error) {
	s.waiting--
	if a.err != nil {
		return 0, nil, s.fail(a.err)
	}
	if a.typ == 'f' {
		s.frameAnswered(a.payload)
	}
	return a.typ, a.payload, nil
}

// next waits for the next answer (the reader's deadline bounds the wait).
func (s *screen) next() (byte, []byte, error) {
	if s.err != nil {
		return 0, nil, s.err
	}
	if s.waiting == 0 {
		return 0, nil, errors.New("capture: renderer: no answer is owed")
	}
	if err := s.awaitHello(); err != nil {
		return 0, nil, err
	}
	return s.take(<-s.answers)
}

// strictText is s with control characters escaped, for error messages.
func strictText(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// write sends b as terminal output, in messages of at most
// writeMessage bytes, each with the length of its plain prefix.
func (s *screen) write(b []byte) error { return s.writeString(string(b)) }

// writeString is write for text, which is queued without a copy; plain
// text that scrolls out of the buffer before the next frame is replaced
// (render_fastforward.go).
func (s *screen) writeString(text string) error { return s.output(text) }

// queueText queues text as output messages as it is.
func (s *screen) queueText(text string) error {
	for len(text) > 0 {
		n := min(len(text), writeMessage)
		if err := s.queueMessage(message{typ: 'w', payload: text[:n], plain: plainPrefix(text[:n])}); err != nil {
			return err
		}
		text = text[n:]
	}
	return s.err
}

// resize changes the screen size (after the output sent before).
func (s *screen) resize(columns, rows int) error {
	if s.ff.holdResize(columns, rows) {
		return s.err
	}
	if err := s.release(); err != nil {
		return err
	}
	if err := s.endRun(); err != nil {
		return err
	}
	s.ff.known = false
	s.ff.forget()
	s.ff.cols, s.ff.rows = helperSize(columns, rows)
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
	if err := s.release(); err != nil {
		return err
	}
	if err := s.endRun(); err != nil {
		return err
	}
	s.ff.fresh(t)
	return s.send('n', p[:])
}

// requestFrame asks for the screen once everything sent before is
// parsed; the frame comes on answerC (see frameOf).
func (s *screen) requestFrame() error { return s.frameRequest() }

// snapshot returns the screen once everything sent before is parsed
// (requestFrame, then the frame). No other answer may be owed.
func (s *screen) snapshot() (RenderedFrame, error) {
	if err := s.requestFrame(); err != nil {
		return RenderedFrame{}, err
	}
	return s.frameOf(s.next())
}

// frameOf decodes the answer to requestFrame.
func (s *screen) frameOf(typ byte, b []byte, err error) (RenderedFrame, error) {
	if err == nil && typ != 'f' {
		err = s.fail(fmt.Errorf("answered %q to a snapshot", typ))
	}
	if err != nil {
		return RenderedFrame{}, err
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
	if len(b) < 10 {
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
	if b[9] > 1 { // ready (fastForward.frameAnswered reads it)
		return RenderedFrame{}, fmt.Errorf("its frame's ready flag is %d", b[9])
	}
	if f.Columns < 1 || f.Rows < 1 {
		return RenderedFrame{}, fmt.Errorf("its frame is %dx%d", f.Columns, f.Rows)
	}
	// every row takes at least its 4-byte length: a row count the
	// message cannot hold fails before anything is allocated for it
	if f.Rows > (len(b)-10)/4 {
		return RenderedFrame{}, fmt.Errorf("its frame is %dx%d with fewer rows", f.Columns, f.Rows)
	}
	// one string for all the texts (each a substring of it): one
	// allocation per frame rather than one per row
	all := string(b)
	rest, at := b[10:], 10
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
		t := all[at+4 : at+4+int(n)]
		rest, at = rest[4+n:], at+4+int(n)
		if !utf8.ValidString(t) {
			return "", fmt.Errorf("its frame's %s is not UTF-8", what)
		}
		return t, nil
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

// fastStats is what the fast-forward did (render_fastforward.go): the
// bytes it skipped and how often it cut a run.
type fastStats struct {
	Skipped int64 `json:"skipped"`
	Cuts    int64 `json:"cuts"`
}

// stats is what the fast-forward did so far, once the helper confirmed
// it applied as many cuts (a round trip: the helper is alive). No other
// answer may be owed.
func (s *screen) stats() (fastStats, error) {
	if err := s.release(); err != nil {
		return fastStats{}, err
	}
	if err := s.endRun(); err != nil {
		return fastStats{}, err
	}
	if err := s.request('k'); err != nil {
		return fastStats{}, err
	}
	typ, b, err := s.next()
	if err == nil && typ != 'k' {
		err = s.fail(fmt.Errorf("answered %q to a statistics request", typ))
	}
	if err != nil {
		return fastStats{}, err
	}
	var st struct {
		Cuts *int64 `json:"cuts"`
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Cuts == nil {
		return fastStats{}, s.fail(fmt.Errorf("its statistics are not JSON with the cuts: %q", strictText(string(b))))
	}
	if *st.Cuts != s.ff.cuts {
		return fastStats{}, s.fail(fmt.Errorf("it applied %d cuts of %d", *st.Cuts, s.ff.cuts))
	}
	return fastStats{Skipped: s.ff.skipped, Cuts: s.ff.cuts}, nil
}

// close ends the helper: its stdin is closed, so it exits on its own once
// it has parsed what was written, and after a short grace its tree is
// terminated and released either way.
func (s *screen) close() {
	if s.closed {
		return
	}
	s.closed = true
	// Nothing is asked of a closed screen, so nothing queued or held is
	// written, and an open plain run is not ended: its end only makes the
	// helper parse the run's kept lines (scrollback and rows: about 100
	// KB of a fast writer's output) into a screen nobody reads, which the
	// capture then waited for.
	s.queued, s.queuedBytes = nil, 0
	grace := 2 * time.Second
	if s.err != nil || !s.said { // a helper that failed, or never said hello, is not waited for
		grace = 0
	}
	s.end(grace)
}

// retire lets the helper end while its user still works, for a screen
// that owes no answer and that nothing will be asked of any more: its
// input is closed (after what was written), so it exits on its own
// meanwhile, and close then finds it gone (its tree is still terminated
// and released there, once the capture's own tree was ended: a helper's
// tree, started before the target, also claims the target's orphans, so
// it is not terminated while the target's may still have members). A
// message queued afterwards fails the screen.
func (s *screen) retire() {
	if s.closed || s.retired {
		return
	}
	s.retired, s.queued = true, nil
	close(s.writes)
}

// end closes the helper's stdin, waits up to grace for it to exit,
// terminates its tree and waits for the reader and writer goroutines.
func (s *screen) end(grace time.Duration) {
	if !s.retired {
		close(s.writes)
	}
	select {
	case <-s.tree.Exited():
	case <-time.After(grace):
	}
	s.tree.Terminate(100 * time.Millisecond)
	<-s.writerDone // the helper is gone, so its writes fail at once
	close(s.done)
	s.outFile.Close()
	<-s.readerDone
	for _, t := range s.stale {
		t.Terminate(100 * time.Millisecond)
	}
	s.stale = nil
}

// detach stops the goroutines of a helper that failed its hello (so
// nothing was written to it: before the hello what is sent stays queued)
// and closes its input and output; its tree is kept in s.stale and
// terminated by end, once the capture's own tree was ended (a helper's
// tree, started before the target, also claims the target's orphans).
func (s *screen) detach() {
	close(s.writes)
	<-s.writerDone
	close(s.done)
	s.outFile.Close()
	<-s.readerDone
	s.stale = append(s.stale, s.tree)
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

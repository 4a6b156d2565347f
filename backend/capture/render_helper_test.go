package capture

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testNode is the Node of the tests (the one on PATH), which stands for
// the pinned runtime; tests skip without it.
func testNode(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	node, _ = filepath.Abs(node)
	return node
}

// testHelper is the renderer helper of a test: the Node on PATH, a
// supervisor of its own, and the tests' startup snapshots (so the tests
// render as the app does; loaderHelper renders with the loader).
func testHelper(t *testing.T) RendererHelper {
	t.Helper()
	h := loaderHelper(t)
	h.NodeSHA256, h.Snapshots = testSnapshots(t)
	return h
}

// loaderHelper is testHelper without snapshots.
func loaderHelper(t *testing.T) RendererHelper {
	t.Helper()
	return RendererHelper{Node: testNode(t), Supervisor: newSupervisor(t)}
}

// sharedSnapshots are the tests' renderer snapshots, kept in the user's
// cache directory (gatehouse-tests/renderer) across test runs, as the
// app keeps its own: one RendererSnapshots per test binary, so a
// snapshot is built or verified once per run.
var sharedSnapshots = sync.OnceValues(func() (string, *RendererSnapshots) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", nil
	}
	node, _ = filepath.Abs(node)
	sum, err := fileSHA256(node)
	dir, derr := os.UserCacheDir()
	if err != nil || derr != nil {
		return "", nil
	}
	return sum, NewRendererSnapshots(filepath.Join(dir, "gatehouse-tests", "renderer"))
})

// testSnapshots is the Node digest and snapshots of testHelper.
func testSnapshots(t testing.TB) (string, *RendererSnapshots) {
	t.Helper()
	sum, s := sharedSnapshots()
	if s == nil {
		t.Log("renderer tests run without startup snapshots (no Node digest or user cache directory)")
	}
	return sum, s
}

func startTestScreen(t *testing.T, h RendererHelper, term Terminal) *screen {
	t.Helper()
	s, err := startScreen(h, term)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

func xsnap(t *testing.T, s *screen) RenderedFrame {
	t.Helper()
	f, err := s.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestXtermScreenRenders(t *testing.T) {
	h := testHelper(t)
	s := startTestScreen(t, h, Terminal{Columns: 6, Rows: 2, Scrollback: 10})
	if s.version != "@xterm/headless 6.0.0" {
		t.Errorf("version %q", s.version)
	}
	// queries get no answer and block nothing; UTF-8 split across writes
	for range 100 {
		s.write([]byte("\x1b[6n\x1b[c"))
	}
	s.write([]byte("ab\r\n\xe6\x97"))
	s.write([]byte("\xa5x"))
	f := xsnap(t, s)
	if f.Lines[0] != "ab    " || f.Lines[1] != "日x   " || f.CursorX != 3 || f.CursorY != 1 || f.ActiveBuffer != BufferNormal {
		t.Fatalf("frame %+v", f)
	}
	s.write([]byte("\x1b[?1049h"))
	if xsnap(t, s).ActiveBuffer != BufferAlternate {
		t.Fatal("alternate screen not reported")
	}
	s.resize(3, 1)
	if f := xsnap(t, s); f.Columns != 3 || f.Rows != 1 || len(f.Lines) != 1 {
		t.Fatalf("after resize %+v", f)
	}
	// the example: CSI b without a parameter repeats once
	s2 := startTestScreen(t, h, Terminal{Columns: 8, Rows: 2, Scrollback: 10})
	s2.write([]byte("xy\x1b[b|"))
	if f := xsnap(t, s2); f.Lines[0] != "xyy|    " || f.Lines[1] != "        " {
		t.Fatalf("REP %q", f.Lines)
	}
	// a pending wrap: the cursor column is the column count
	s2.write([]byte("\rabcdefgh"))
	if f := xsnap(t, s2); f.CursorX != 8 || f.CursorY != 0 {
		t.Fatalf("pending wrap cursor %d,%d", f.CursorX, f.CursorY)
	}
}

// TestXtermScreenFailures: every way the helper can fail is a sticky
// error of the screen naming the renderer, never a hang or a partial
// frame.
func TestXtermScreenFailures(t *testing.T) {
	h := testHelper(t)
	t.Run("protocol", func(t *testing.T) {
		s := startTestScreen(t, h, Terminal{Columns: 4, Rows: 2})
		s.send('?', nil)
		_, err := s.snapshot()
		if err == nil || !strings.Contains(err.Error(), "terminal renderer (xterm.js helper) failed") || !strings.Contains(err.Error(), "unknown message type") {
			t.Fatalf("err %v", err)
		}
		if err2 := s.write([]byte("x")); err2 != err {
			t.Fatalf("not sticky: %v", err2)
		}
	})
	t.Run("killed", func(t *testing.T) {
		s := startTestScreen(t, h, Terminal{Columns: 4, Rows: 2})
		syscall.Kill(s.tree.Pid(), syscall.SIGKILL)
		<-s.tree.Exited()
		s.write([]byte("x"))
		if _, err := s.snapshot(); err == nil || !strings.Contains(err.Error(), "terminal renderer") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("silent", func(t *testing.T) {
		s := startTestScreen(t, h, Terminal{Columns: 4, Rows: 2})
		s.timeout = 300 * time.Millisecond // after the start, which a busy machine may make slow
		syscall.Kill(s.tree.Pid(), syscall.SIGSTOP)
		defer syscall.Kill(s.tree.Pid(), syscall.SIGCONT)
		if _, err := s.snapshot(); err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("memory", func(t *testing.T) {
		h := h
		h.MemoryMB = 16
		s, err := startScreen(h, Terminal{Columns: 1000, Rows: 1000, Scrollback: 1000})
		if err == nil {
			defer s.close()
			line := bytes.Repeat([]byte("\x1b[31mx\x1b[32my"), 500)
			for i := 0; i < 3000 && err == nil; i++ {
				err = s.write(append(line, '\r', '\n'))
			}
			if err == nil {
				_, err = s.snapshot()
			}
		}
		if err == nil || !strings.Contains(err.Error(), "exceeded its 16 MB memory bound") {
			t.Fatalf("a 16 MB heap held a 1000×2000 screen: %v", err)
		}
	})
	t.Run("no node", func(t *testing.T) {
		if _, err := startScreen(RendererHelper{Node: "node", Supervisor: h.Supervisor}, Terminal{Columns: 1, Rows: 1}); err == nil {
			t.Fatal("a relative Node path was run")
		}
	})
}

// TestRendererBundleIsCurrent rebuilds the helper bundle from
// frontend/renderer/helper.mjs with the installed packages and requires
// the committed render_helper.js to be the same.
func TestRendererBundleIsCurrent(t *testing.T) {
	requireNode(t)
	out := filepath.Join(t.TempDir(), "helper.js")
	cmd := exec.Command("npx", "rolldown", "renderer/helper.mjs", "--format", "cjs", "--platform", "node", "--minify", "-o", out)
	cmd.Dir = frontendDir()
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rolldown: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != rendererScript {
		t.Fatal("render_helper.js is stale: run `make renderer`")
	}
}

// TestRendererInputPipeHoldsABatch: the helper's input pipe holds one
// whole batch of queued messages (maxChunkMessage), so the helper parses
// a batch without waiting for the capture's next write (growPipe).
func TestRendererInputPipeHoldsABatch(t *testing.T) {
	s := startTestScreen(t, testHelper(t), Terminal{Columns: 80, Rows: 24})
	rc, err := s.in.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	rc.Control(func(fd uintptr) { size, err = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile("/proc/sys/fs/pipe-max-size"); size < maxChunkMessage {
		if max, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && max < maxChunkMessage {
			t.Skipf("fs.pipe-max-size is %d", max)
		}
		t.Errorf("the helper's input pipe holds %d bytes, want at least %d", size, maxChunkMessage)
	}
	// and the screen works through it: one batch larger than the old
	// 64 KiB capacity, then a frame
	s.write(bytes.Repeat([]byte("x"), maxChunkMessage-64))
	if f := xsnap(t, s); !strings.HasPrefix(f.Lines[0], "xxxx") {
		t.Errorf("row 0 %q", f.Lines[0])
	}
}

// frameMessage is a binary frame message as the helper writes it
// (helper.mjs encodeFrame, without the 5-byte header).
func frameMessage(c, r, x, y int, a byte, texts ...string) []byte {
	b := binary.LittleEndian.AppendUint16(nil, uint16(c))
	b = binary.LittleEndian.AppendUint16(b, uint16(r))
	b = binary.LittleEndian.AppendUint16(b, uint16(x))
	b = binary.LittleEndian.AppendUint16(b, uint16(y))
	b = append(b, a, 0) // not ready (fastforward.mjs)
	for _, t := range texts {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t)))
		b = append(b, t...)
	}
	return b
}

// TestDecodeFrame: the helper's binary frame is read exactly, and every
// malformed one is an error naming what is wrong, never a frame.
func TestDecodeFrame(t *testing.T) {
	f, err := decodeFrame(frameMessage(3, 2, 3, 1, 1, "ab ", "é  ", "\x1b[?1049h\x1b[Hab"))
	if err != nil {
		t.Fatal(err)
	}
	want := RenderedFrame{Columns: 3, Rows: 2, CursorX: 3, CursorY: 1, ActiveBuffer: BufferAlternate, Lines: []string{"ab ", "é  "}, SerializedState: "\x1b[?1049h\x1b[Hab"}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("decoded %+v, want %+v", f, want)
	}
	long := frameMessage(3, 1, 0, 0, 0, "abc", "")
	binary.LittleEndian.PutUint32(long[len(long)-4:], 1<<31) // the state's length past the end
	for name, c := range map[string]struct {
		msg  []byte
		want string
	}{
		"short":          {[]byte{1, 0, 1, 0, 0, 0, 0}, "7 bytes long"},
		"ready 2":        {func() []byte { m := frameMessage(3, 1, 0, 0, 0, "abc", ""); m[9] = 2; return m }(), "ready flag is 2"},
		"buffer 2":       {frameMessage(3, 1, 0, 0, 2, "abc", ""), "names buffer 2"},
		"no columns":     {frameMessage(0, 1, 0, 0, 0, "", ""), "0x1"},
		"no rows":        {frameMessage(3, 0, 0, 0, 0, ""), "3x0"},
		"rows missing":   {frameMessage(3, 2, 0, 0, 0, "abc", ""), "ends before the serialized state"},
		"many rows":      {frameMessage(3, 65535, 0, 0, 0, "abc", ""), "with fewer rows"},
		"length too big": {long, "ends inside the serialized state"},
		"trailing bytes": {append(frameMessage(3, 1, 0, 0, 0, "abc", ""), 0), "1 bytes after"},
		"not UTF-8":      {frameMessage(3, 1, 0, 0, 0, "a\xffc", ""), "row 0 is not UTF-8"},
	} {
		if f, err := decodeFrame(c.msg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %+v, %v; want an error with %q", name, f, err, c.want)
		}
	}
}

// FuzzDecodeFrame: any message either fails or is a frame whose binary
// form is the message itself (nothing read twice, skipped or left over).
func FuzzDecodeFrame(f *testing.F) {
	f.Add(frameMessage(3, 2, 3, 1, 1, "ab ", "é  ", "\x1b[?1049h\x1b[Hab"))
	f.Add(frameMessage(1, 1, 0, 0, 0, " ", ""))
	f.Add([]byte{1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, msg []byte) {
		fr, err := decodeFrame(msg)
		if err != nil {
			return
		}
		a := byte(0)
		if fr.ActiveBuffer == BufferAlternate {
			a = 1
		}
		got := frameMessage(fr.Columns, fr.Rows, fr.CursorX, fr.CursorY, a, append(fr.Lines, fr.SerializedState)...)
		got[9] = msg[9] // the ready flag, not part of the frame
		if !bytes.Equal(got, msg) {
			t.Fatalf("decoded %+v, which is % x, not % x", fr, got, msg)
		}
	})
}

// TestRendererRefusesAFalsePlainPrefix: an output message whose plain
// prefix length is past its bytes, or short of their plain prefix, is a
// protocol error the helper reports, never a run it collects (a claim the
// fast-forward trusted would skip bytes it must parse).
func TestRendererRefusesAFalsePlainPrefix(t *testing.T) {
	h := testHelper(t)
	for _, tc := range []struct {
		name, payload string
		plain         int
		want          string
	}{
		{"past the bytes", "ab\x1b[m", 6, "a plain prefix of 6 bytes in 5"},
		{"short of the prefix", "abc\x1b[m", 2, "the plain prefix is longer than 2 bytes"},
		{"none claimed", "abc", 0, "the plain prefix is longer than 0 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startTestScreen(t, h, Terminal{Columns: 8, Rows: 2})
			s.queueMessage(message{typ: 'w', payload: tc.payload, plain: tc.plain})
			_, err := s.snapshot()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	// and the true prefix renders
	s := startTestScreen(t, h, Terminal{Columns: 8, Rows: 2})
	s.write([]byte("abc\x1b[31mdef"))
	if f := xsnap(t, s); f.Lines[0] != "abcdef  " {
		t.Errorf("row 0 %q", f.Lines[0])
	}
}

// writePieces writes msgs to the helper's stdin one piece of size bytes
// at a time, each once the helper has read the one before (the pipe is
// empty), so every piece is a read of its own: headers, plain lengths
// and payloads cut at every place. The writer goroutine must be idle.
func writePieces(t *testing.T, s *screen, size int, msgs ...message) {
	t.Helper()
	var b []byte
	for _, m := range msgs {
		n := len(m.payload)
		if m.typ == 'w' {
			n += 4
		}
		b = append(b, m.typ)
		b = binary.LittleEndian.AppendUint32(b, uint32(n))
		if m.typ == 'w' {
			b = binary.LittleEndian.AppendUint32(b, uint32(m.plain))
		}
		b = append(b, m.payload...)
	}
	for len(b) > 0 {
		n := min(size, len(b))
		if _, err := s.in.Write(b[:n]); err != nil {
			select { // it failed (and said why on stdout) and exited
			case <-s.tree.Exited():
				return
			case <-time.After(10 * time.Second):
				t.Fatal(err)
			}
		}
		b = b[n:]
		for deadline := time.Now().Add(10 * time.Second); unread(s.in) > 0; time.Sleep(time.Millisecond) {
			if isClosed(s.tree.Exited()) { // it failed (and said why on stdout)
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the helper does not read its input")
			}
		}
	}
}

// TestRendererReadsMessagesInPieces: messages that reach the helper in
// pieces (one byte, or a few, per read) render exactly as when written
// at once, output and a resize among them; a plain prefix whose falsity
// shows only in a later piece is still refused.
func TestRendererReadsMessagesInPieces(t *testing.T) {
	h := testHelper(t)
	text := "plain line\n\rmore plain\x1b[1;31mred\x1b[0m caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\nlast\n"
	out := func(s string) message { return message{typ: 'w', payload: s, plain: plainPrefix(s)} }
	size := func(c, r int) message {
		var p [4]byte
		binary.LittleEndian.PutUint16(p[0:], uint16(c))
		binary.LittleEndian.PutUint16(p[2:], uint16(r))
		return message{typ: 'r', payload: string(p[:])}
	}
	term := Terminal{Columns: 12, Rows: 4, Scrollback: 2}
	whole := startTestScreen(t, h, term)
	whole.writeString(text[:20])
	whole.writeString(text[20:])
	whole.resize(9, 5)
	whole.writeString(text)
	want := xsnap(t, whole)
	for _, piece := range []int{1, 2, 3, 7} {
		s := startTestScreen(t, h, term)
		writePieces(t, s, piece, out(text[:20]), out(text[20:]), size(9, 5), out(text))
		if got := xsnap(t, s); !reflect.DeepEqual(got, want) {
			t.Errorf("in pieces of %d bytes:\n got %+v\nwant %+v", piece, got, want)
		}
	}
	s := startTestScreen(t, h, term)
	writePieces(t, s, 1, message{typ: 'w', payload: "abcdef", plain: 2})
	if _, err := s.snapshot(); err == nil || !strings.Contains(err.Error(), "the plain prefix is longer than 2 bytes") {
		t.Fatalf("err %v", err)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

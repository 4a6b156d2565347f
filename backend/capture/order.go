package capture

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// dispatchOrderWait bounds how long the PTY reader holds a chunk back
// while an event is being performed (see afterDispatch).
const dispatchOrderWait = 100 * time.Millisecond

// The dispatcher performs events on its own goroutine, so without care the
// recording loop could journal the echo of an input, or a trap's answer to
// a signal, before the event that caused it: the reader and the dispatcher
// race to hand their news over. Two steps keep cause before effect:
//
//   - the reader hands over a chunk only once no event is being performed
//     (afterDispatch), so the outcome of every event whose effect the chunk
//     can hold is already in s.results;
//   - the loop takes those outcomes before it records the chunk
//     (takeResults).
//
// An event whose write blocks (the target reads no input) stops holding
// chunks back after dispatchOrderWait, so the output keeps flowing.

// afterDispatch waits until no event is being performed, or until the one
// being performed has taken dispatchOrderWait.
func (s *session) afterDispatch() {
	for {
		v := s.inflight.Load()
		if v == 0 || time.Since(s.start)-time.Duration(v-1) > dispatchOrderWait {
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// takeResults records the event outcomes already handed over.
func (s *session) takeResults() {
	for {
		select {
		case res := <-s.results:
			s.takeResult(res)
		default:
			return
		}
	}
}

// takeResult records the outcome of one event, after the output taken
// before it (flushPending).
func (s *session) takeResult(res result) {
	s.flushPending()
	s.taken++
	s.rec.interaction(s.event(res.index), res.at, res.outcome)
}

// While framesAhead rendered frames are owed (the renderer is still
// parsing the chunks before), the output taken meanwhile is joined into
// s.pending and recorded as one chunk when the oldest frame has come, so reading the PTY never
// waits on the renderer, and the slower the renderer the larger (and the
// fewer) the chunks it gets, which its fast-forward cuts best. What is
// pending is recorded before any event outcome, the exit and the
// settlement (flushPending), so output is journaled before what was
// recorded after it was read.

// frameArrived records the answer a (from the screen's answerC) and then
// the output pending, once fewer than framesAhead frames are owed.
func (s *session) frameArrived(a answer) {
	s.rec.frameArrived(s.rec.scr.take(a))
	if s.rec.owedFrames() < framesAhead {
		s.recordPending()
	}
}

// pendingBytes is the most output pending at once: 4 MiB, so a fast
// writer's 10 MB reach a slow renderer as a few chunks, and the buffer is
// allocated once.
const pendingBytes = 4 << 20

// recordPending records the output pending as one chunk.
func (s *session) recordPending() {
	if len(s.pending) == 0 {
		return
	}
	s.rec.chunk(s.pending, s.pendingAt)
	s.pending = s.pending[:0]
}

// flushPending waits for the frames owed and records the output pending.
func (s *session) flushPending() {
	for {
		s.rec.awaitFrames()
		if len(s.pending) == 0 {
			return
		}
		s.recordPending()
	}
}

// takeChunk records chunk c, received with ok from s.chunks, after the
// outcomes of the events that may have caused it (takeResults). When ok is
// false the output has ended: it forgets s.chunks and reports false.
func (s *session) takeChunk(c chunk, ok bool) bool {
	if !ok {
		s.chunks = nil
		return false
	}
	s.takeResults()
	if s.rec.rx != nil { // a reactive graph sees every chunk as read
		s.rec.chunk(c.data, c.at)
		s.recycle(c.data)
		return true
	}
	// While the renderer is busy, or output is still pending (the frames
	// it waited for came outside frameArrived, to a checkpoint), join the
	// output pending, so it is recorded in the order it was read.
	if busy := s.rec.owedFrames() >= framesAhead; busy || len(s.pending) > 0 {
		// within the room left (one byte more, so that recording it
		// truncates): past limits.output_bytes nothing is recorded
		if room := s.rec.limits.OutputBytes - s.rec.rawBytes + 1 - len(s.pending); room > 0 && !s.rec.rawFull {
			if s.pending == nil {
				s.pending = make([]byte, 0, pendingBytes+readBuffer)
			}
			s.pending = append(s.pending, c.data[:min(room, len(c.data))]...)
		}
		s.pendingAt = c.at
		s.recycle(c.data)
		if !busy || len(s.pending) >= pendingBytes { // enough for one chunk: the renderer gets it queued
			s.recordPending()
		}
		return true
	}
	// Chunks the reader queued while the loop was busy (rendering the last
	// one) are recorded as one chunk, as one longer read would have
	// returned them: the loop then waits on the renderer once for them,
	// not once per read. Coalescing stops at an event outcome handed over
	// meanwhile (the dispatcher hands it over before the reader can hand
	// over the chunk after it, see afterDispatch), so output after an
	// event is never recorded before it. Recording copies what it keeps,
	// so every read buffer goes back to the reader (recycle) once recorded
	// or joined.
	data, at, joined := c.data, c.at, false
	record := func() {
		s.rec.chunk(data, at)
		if !joined {
			s.recycle(data)
		}
	}
	for len(data) < coalesceBytes {
		var next chunk
		select {
		case n, ok := <-s.chunks:
			if !ok {
				record()
				s.chunks = nil
				return true
			}
			next = n
		default:
			record()
			return true
		}
		if len(s.results) > 0 {
			record()
			s.takeResults()
			data, at, joined = next.data, next.at, false
			continue
		}
		if !joined { // one buffer, reused, for the joined chunks
			read := data
			data, joined = append(s.joined[:0], data...), true
			s.recycle(read)
		}
		data, at = append(data, next.data...), next.at
		s.recycle(next.data)
		s.joined = data[:0]
	}
	record()
	return true
}

// coalesceBytes is where takeChunk stops joining queued chunks: 1 MiB,
// enough for the renderer's fast-forward to skip most of a fast writer's
// plain lines (it keeps the last scrollback + 2 × rows lines of a chunk,
// render_fastforward.go), and one write to the renderer
// (maxChunkMessage).
const coalesceBytes = maxChunkMessage

// exitOrderWait bounds how long the loop reads the output the root left
// behind before it records the root's exit; exitQuiet is how long no chunk
// must come (with nothing unread in the PTY) for that output to be over.
const (
	exitOrderWait = 200 * time.Millisecond
	exitQuiet     = 10 * time.Millisecond
)

// takeOutputBeforeExit records the outcome of the event being performed
// when the root exited (a signal may have ended it) and the output still
// on its way (unread in the PTY, or read and not yet handed over), so that
// what came before the root's exit is journaled before it. It stops once
// no chunk has come for exitQuiet while the PTY holds no unread byte and
// the reader holds no chunk, or after exitOrderWait (children that outlive
// the root may keep writing).
func (s *session) takeOutputBeforeExit() {
	s.afterDispatch()
	s.takeResults()
	s.takeBacklog(time.Since(s.start))
	deadline := time.NewTimer(exitOrderWait)
	defer deadline.Stop()
	quiet := time.NewTimer(exitQuiet)
	defer quiet.Stop()
	for s.chunks != nil {
		select {
		case c, ok := <-s.chunks:
			if !s.takeChunk(c, ok) {
				return
			}
			quiet.Reset(exitQuiet)
		case <-quiet.C:
			if !s.holding.Load() && unread(s.master) == 0 {
				return
			}
			quiet.Reset(exitQuiet)
		case <-deadline.C:
			return
		}
	}
}

// takeBacklog records the chunks handed over by seen (since s.start),
// however many: when the target writes faster than the screen renders,
// the exit is seen with output queued, and exitOrderWait must not cut
// that short. Chunks read later (children that outlive the root may write
// without end) are left to the caller.
func (s *session) takeBacklog(seen time.Duration) {
	for s.chunks != nil {
		select {
		case c, ok := <-s.chunks:
			if !s.takeChunk(c, ok) || c.at > seen {
				return
			}
		default:
			return
		}
	}
}

// unread is the number of bytes the PTY holds for the master to read (0
// when it cannot tell).
func unread(master *os.File) int {
	conn, err := master.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	conn.Control(func(fd uintptr) { //nolint:errcheck // 0 when it fails
		n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ)
	})
	return n
}

package capture

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// recorder appends observations to a Record in capture order, enforcing
// the scenario's limits while streaming. It is used by one goroutine.
type recorder struct {
	rec    *Record
	limits Limits
	norm   *normalizer
	text   stream
	scr    *screen

	rawBytes      int
	renderedBytes int
	rawFull       bool  // raw frames stopped at a limit
	renderedFull  bool  // rendered frames stopped at a limit
	screenErr     error // the renderer failed (screenFailed)
	samplesFull   bool
	seen          map[int]string // pid → identity of its last sample
	fs            *checkpoints   // filesystem checkpoints (checkpoints.go)
	rx            *reactiveRun   // reactive run; nil without (reactive_run.go)

	// screenRedacted: a rendered frame's screen composed a secret and was
	// redacted (frameArrived), which the limitations say once.
	screenRedacted bool

	// async: rendered frames are asked for and recorded when they come
	// (frameArrived, from the session's loop), so recording never waits
	// on the renderer; otherwise each is waited for where it is asked.
	async    bool
	frameAts []time.Duration // when each frame asked for and not yet recorded was due
}

// journal notes one observation in capture order.
func (r *recorder) journal(collection string, index int) {
	r.rec.EventJournal = append(r.rec.EventJournal, JournalEntry{
		CaptureOrder: len(r.rec.EventJournal), Collection: collection, Index: index,
	})
	if r.rx != nil {
		r.rx.admit(r, collection, index)
	}
}

// truncate marks the capture truncated, saying which limit.
func (r *recorder) truncate(what string) {
	r.rec.Truncated = true
	r.rec.Limitations = append(r.rec.Limitations, what)
	if r.rx != nil {
		r.rx.incomplete()
	}
}

// chunk records one raw PTY chunk read at (since the start): the raw
// frame (cut at limits.output_bytes, refused past limits.frames) and then
// the screen that frame renders to. The renderer gets exactly the text
// recorded (normalized and redacted), never the target's bytes: each
// rendered frame is xterm.js's screen after the recorded raw frames up to
// it, as the viewer replays them, and the helper never sees a secret the
// raw frames redact.
func (r *recorder) chunk(data []byte, at time.Duration) {
	if r.rawFull {
		return
	}
	if room := r.limits.OutputBytes - r.rawBytes; len(data) > room {
		data = data[:room]
		r.rawFull = true
		r.truncate(fmt.Sprintf("raw output exceeded limits.output_bytes (%d bytes); later output was not recorded", r.limits.OutputBytes))
	}
	r.rawBytes += len(data)
	text := r.text.push(data)
	if r.rawFull {
		text += r.text.flush()
	}
	r.render(r.frame(text, at), at)
	r.literalCheckpoints(text)
}

// render feeds the screen text, what a raw frame recorded, and asks for
// the screen it renders to (rendered). The screen never gets the
// held-back tail of a chunk (a possible start of a secret) before the raw
// frames do, so no rendered frame shows a secret's first bytes while they
// are held back.
//
// Once rendered frames stopped at a limit, nothing reads the screen, so
// the output is not parsed any more.
func (r *recorder) render(text string, at time.Duration) {
	if text == "" || r.renderedFull {
		return
	}
	if err := r.scr.writeString(text); err != nil {
		r.screenFailed(err)
		return
	}
	r.rendered(at)
}

// greeted takes the renderer's hello, a from the screen's helloC; a
// renderer that failed it fails the capture (screenFailed).
func (r *recorder) greeted(a answer) {
	if err := r.scr.greet(a); err != nil {
		r.screenFailed(err)
	}
}

// awaitRenderer waits for the renderer's hello when it has not come yet.
func (r *recorder) awaitRenderer() {
	if err := r.scr.awaitHello(); err != nil {
		r.screenFailed(err)
	}
}

// screenFailed stops rendered frames when the renderer failed, and keeps
// the error: the capture then fails with it (run), since a renderer
// failure is a defect, never an accepted truncation.
func (r *recorder) screenFailed(err error) {
	if r.screenErr == nil {
		r.screenErr = err
	}
	if !r.renderedFull {
		r.renderedFull = true
		r.truncate(fmt.Sprintf("rendered frames stopped: %v; later screens were not recorded", err))
	}
}

// frame appends a raw frame holding text, normalized and redacted, and
// returns what it recorded: nothing when text is empty or past
// limits.frames. A secret text shows split by escape sequences, CR or LF
// is redacted too (redactSplit), so the screen the frame renders to does
// not compose it either.
func (r *recorder) frame(text string, at time.Duration) string {
	if text == "" {
		return ""
	}
	if len(r.rec.Frames) >= r.limits.Frames {
		if !r.rawFull {
			r.rawFull = true
			r.truncate(fmt.Sprintf("raw frames exceeded limits.frames (%d); later output was not recorded", r.limits.Frames))
		}
		return ""
	}
	data := r.norm.text(r.norm.redactSplit(text))
	r.rec.Frames = append(r.rec.Frames, Frame{Sequence: len(r.rec.Frames), AtMS: r.norm.ms(ms(at)), Data: data})
	r.journal("frames", len(r.rec.Frames)-1)
	return data
}

// flush records text still held back at the end of the output.
func (r *recorder) flush(at time.Duration) {
	if !r.rawFull {
		r.render(r.frame(r.text.flush(), at), at)
	}
}

// rendered asks for the current screen, recorded at at once it comes
// (frameArrived): at once, or, when async, when the session's loop
// receives it.
func (r *recorder) rendered(at time.Duration) {
	if r.renderedFull {
		return
	}
	if err := r.scr.requestFrame(); err != nil {
		r.screenFailed(err)
		return
	}
	r.frameAts = append(r.frameAts, at)
	if !r.async {
		r.awaitFrames()
	}
}

// framesAhead is how many rendered frames a capture asks for before it
// waits for the first of them: the helper parses chunk k+1 while frame k
// is on its way back, instead of one round trip between the two processes
// per chunk. Frames still come in order, each the screen after exactly
// its chunk (frameAts holds when each was due).
const framesAhead = 8

// framesOwed reports whether a frame asked for has not been recorded
// (none is, once the renderer failed).
func (r *recorder) framesOwed() bool { return r.owedFrames() > 0 }

// owedFrames is how many frames asked for have not been recorded (none
// are, once the renderer failed).
func (r *recorder) owedFrames() int {
	if len(r.frameAts) > 0 && r.scr.err != nil {
		r.frameAts = nil
	}
	return len(r.frameAts)
}

// awaitFrames waits for and records every frame owed.
func (r *recorder) awaitFrames() {
	for r.framesOwed() {
		r.frameArrived(r.scr.next())
	}
}

// frameArrived records the answer to the oldest frame owed: the screen,
// within its own budget of limits.frames frames and limits.output_bytes
// bytes (lines plus serialized state).
func (r *recorder) frameArrived(typ byte, b []byte, err error) {
	at := r.frameAts[0]
	r.frameAts = r.frameAts[1:]
	f, err := r.scr.frameOf(typ, b, err)
	if err != nil {
		r.screenFailed(err)
		return
	}
	if r.renderedFull { // asked for before rendered frames stopped
		return
	}
	// The screen is the render of the recorded (normalized) stream, so it
	// is recorded as it is: normalizing its rows again would make it
	// another screen than the raw frames render to. Only a secret the
	// output composed on the screen from pieces the raw frames hold apart
	// is still redacted, and the frame then says it differs.
	redacted := r.norm.redactScreen(&f)
	size := len(f.SerializedState)
	for _, l := range f.Lines {
		size += len(l)
	}
	switch {
	case len(r.rec.RenderedFrames) >= r.limits.Frames:
		r.renderedFull = true
		r.truncate(fmt.Sprintf("rendered frames exceeded limits.frames (%d); later screens were not recorded", r.limits.Frames))
		return
	case r.renderedBytes+size > r.limits.OutputBytes:
		r.renderedFull = true
		r.truncate(fmt.Sprintf("rendered frames exceeded limits.output_bytes (%d bytes); later screens were not recorded", r.limits.OutputBytes))
		return
	}
	r.renderedBytes += size
	f.Sequence, f.AtMS = len(r.rec.RenderedFrames), r.norm.ms(ms(at))
	if redacted && !r.screenRedacted {
		r.screenRedacted = true
		r.rec.Limitations = append(r.rec.Limitations, fmt.Sprintf("rendered frames: from rendered frame %d on, a screen showed a secret value "+
			"composed from pieces written apart (across raw chunks, or by cursor movement); it was redacted in the lines and "+
			"serialized_state of those frames, which therefore differ from xterm.js's screen of the raw frames, whose pieces still compose it", f.Sequence))
	}
	if n := len(r.rec.RenderedFrames); n > 0 { // a resize dispatched before the last chunk was read
		f.AtMS = max(f.AtMS, r.rec.RenderedFrames[n-1].AtMS)
	}
	r.rec.RenderedFrames = append(r.rec.RenderedFrames, f)
	r.journal("rendered_frames", f.Sequence)
}

// interaction records the outcome of one scheduled event.
func (r *recorder) interaction(ev Event, at time.Duration, outcome string) {
	data := ev.Signal
	switch ev.Type {
	case EventInput:
		data = r.norm.text(ev.Data)
		if ev.Sensitive {
			data = RedactedInput(len(ev.Data))
		}
	case EventResize:
		data = fmt.Sprintf("%dx%d", ev.Columns, ev.Rows)
	}
	r.rec.InteractionEvents = append(r.rec.InteractionEvents, InteractionEvent{
		Sequence: len(r.rec.InteractionEvents), ScheduledAtMS: ev.AtMS, DispatchedAtMS: r.norm.ms(ms(at)),
		Type: ev.Type, Data: data, Outcome: outcome,
	})
	r.journal("interaction_events", len(r.rec.InteractionEvents)-1)
	if ev.Type == EventResize && outcome == OutcomeDispatched && !r.rawFull && !r.renderedFull {
		if err := r.scr.resize(ev.Columns, ev.Rows); err != nil {
			r.screenFailed(err)
			return
		}
		r.rendered(at)
		r.awaitFrames() // a resize is followed by the screen at its size
	}
}

// samples records one observation of the tree's members: a sample for
// each member seen for the first time or whose parent, process group,
// session or command changed since its last sample (so a steady tree does
// not fill the record), within limits.processes samples.
func (r *recorder) samples(pids []int, at time.Duration) {
	if r.seen == nil {
		r.seen = map[int]string{}
	}
	// Ascending pids see parents before their children (short of pid
	// wrap-around), so a parent's ordinal exists when a child needs it.
	pids = slices.Sorted(slices.Values(pids))
	for _, pid := range pids {
		if r.samplesFull {
			return
		}
		p, ok := readProc(pid)
		if !ok {
			continue
		}
		if _, known := r.seen[pid]; known && p.Command == "" {
			continue // exiting: its command line is gone, nothing else changed
		}
		if p.Command == "" {
			p.Command = p.comm
		}
		key := fmt.Sprintf("%d %v %v %s", p.ParentPID, deref(p.ProcessGroupID), deref(p.SessionID), p.Command)
		if r.seen[pid] == key {
			continue
		}
		r.seen[pid] = key
		if len(r.rec.ProcessSamples) >= r.limits.Processes {
			r.samplesFull = true
			r.truncate(fmt.Sprintf("process samples exceeded limits.processes (%d); later samples were not recorded", r.limits.Processes))
			return
		}
		r.norm.addPID(pid)
		p.PID, p.ParentPID = r.norm.pidNumber(pid), r.norm.pidNumber(p.ParentPID)
		if p.ProcessGroupID != nil {
			v := r.norm.pidNumber(*p.ProcessGroupID)
			p.ProcessGroupID = &v
		}
		if p.SessionID != nil {
			v := r.norm.pidNumber(*p.SessionID)
			p.SessionID = &v
		}
		p.AtMS = r.norm.ms(ms(at))
		p.Command = r.norm.text(p.Command)
		r.rec.ProcessSamples = append(r.rec.ProcessSamples, p.ProcessSample)
		r.journal("process_samples", len(r.rec.ProcessSamples)-1)
	}
}

// procSample is a ProcessSample read from /proc with the kernel's
// command name beside it.
type procSample struct {
	ProcessSample
	comm string
}

// readProc reads one process's sample from /proc: Command is its command
// line, empty when it has none (a kernel thread, or a process whose exit
// has begun; see comm).
func readProc(pid int) (procSample, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procSample{}, false
	}
	open, closing := strings.IndexByte(string(b), '('), strings.LastIndexByte(string(b), ')')
	if open < 0 || closing < open {
		return procSample{}, false
	}
	f := strings.Fields(string(b[closing+1:]))
	if len(f) < 4 || f[0] == "Z" || f[0] == "X" {
		return procSample{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	pgid, err1 := strconv.Atoi(f[2])
	sid, err2 := strconv.Atoi(f[3])
	s := procSample{ProcessSample{PID: pid, ParentPID: ppid}, string(b[open+1 : closing])}
	if err1 == nil {
		s.ProcessGroupID = &pgid
	}
	if err2 == nil {
		s.SessionID = &sid
	}
	if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil && len(cmd) > 0 {
		s.Command = strings.TrimRight(strings.ReplaceAll(string(cmd), "\x00", " "), " ")
	}
	return s, true
}

func ms(d time.Duration) int { return int(d / time.Millisecond) }

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gatehouse/gatehouse/backend/loopback"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// pollInterval is the process sampling and settlement polling period.
const pollInterval = 50 * time.Millisecond

// drainTimeout bounds the wait for the last PTY output once the tree is
// gone (or could not be ended).
const drainTimeout = 2 * time.Second

// chunk is one read from the PTY master.
type chunk struct {
	data []byte
	at   time.Duration
}

// result is the outcome of one dispatched event.
type result struct {
	index   int
	at      time.Duration
	outcome string
}

// session is one launched target and the goroutines around it: a reader
// of the PTY master, a dispatcher of scheduled events (so a blocked input
// write never stalls recording), and the recording loop, which is the
// only goroutine that touches the recorder.
type session struct {
	sc     *Scenario
	tree   *proctree.Tree
	master *os.File
	start  time.Time
	rec    *recorder
	shims  *ledger           // command shims; nil without (shim.go)
	lb     *loopback.Server  // loopback replay; nil without (backend/loopback)
	lbRec  loopbackRecording // what was recorded of it (loopback_record.go)

	rx *reactiveRun // reactive run; nil without (reactive_run.go)

	rendererNote int  // the index of the limitation naming the renderer's version, known at its hello (drain)
	taken        int  // event outcomes recorded (takeResult)
	retired      bool // the renderer helper is being ended (retireScreen)

	inflight atomic.Int64 // 1 + start (since s.start) of the event being performed; 0 when none (order.go)
	holding  atomic.Bool  // the reader has read a chunk it has not handed over (order.go)

	chunks         chan chunk
	free           chan []byte   // read buffers the loop has recorded, for the reader to reuse
	joined         []byte        // takeChunk's buffer for queued chunks joined into one (order.go)
	pending        []byte        // output taken while a rendered frame is owed, recorded as one chunk once it came (order.go)
	pendingAt      time.Duration // when the last of it was read
	quit           chan struct{} // closed when nobody receives chunks any more
	readerDone     chan struct{}
	next           int           // events handed to the dispatcher so far
	ended          chan struct{} // closed when the recording loop stops
	jobs           chan int
	results        chan result
	dispatcherDone chan struct{}
}

// run launches the target and records it into rec. A non-nil error with
// rec.Manifest.StartedAt still empty means nothing was launched.
// The program executed, the working directory entered and the filesystem
// roots walked are those of tg, the paths the policy judged. The renderer
// helper of pending is waited for just before the launch, as far as its
// process running (and closed when run returns); its hello comes while
// the target runs (see below).
func run(ctx context.Context, sup *proctree.Supervisor, sc *Scenario, tg target, opts Options, tempRoot string, rec *Record, pending *screenStart) error {
	defer pending.close()
	home, err := homeDir(tempRoot)
	if err != nil {
		return err
	}
	norm, err := newNormalizer(sc, tempRoot, tg)
	if err != nil {
		return err
	}
	env := environment(sc, opts, home, rec)
	shims, err := newLedger(sc, tempRoot)
	if err != nil {
		return err
	}
	defer shims.stop()
	env = shims.environ(env)
	lb, err := newLoopback(sc) // loopback replay (backend/loopback); nil without
	if err != nil {
		return err
	}
	defer lb.Stop()
	env = lb.Environ(env)
	attachLoopback(norm, lb, sc.Normalization.Ports)
	rx, err := newReactiveRun(sc) // reactive run (reactive_run.go); nil without
	if err != nil {
		return err
	}
	master, tty, err := openPTY(sc.Terminal.Columns, sc.Terminal.Rows)
	if err != nil {
		return err
	}
	cps := newCheckpoints(ctx, sc, tg.roots, norm)
	cps.takeBefore() // the "before" checkpoint is taken before launch
	marker := MarkerVariable + "=" + opts.RunID
	// The renderer's process runs before the target does; its hello (Node's
	// start-up) comes while the target runs, which is safe: the output
	// recorded meanwhile is queued for it (the raw frames are recorded as
	// read, the PTY reader never waits on it), and a helper that fails, says
	// something else or says nothing within its timeout fails the capture
	// with that error once the target's tree was ended and proven gone, as
	// on every other error after the launch (greeted, awaitRenderer).
	scr, err := pending.wait()
	if err != nil {
		master.Close()
		tty.Close()
		return fmt.Errorf("capture: %w", err)
	}
	if err := tg.unchanged(); err != nil {
		master.Close()
		tty.Close()
		return err
	}
	started := opts.Now().UTC()
	start := time.Now()
	tree, err := sup.Start(proctree.Spec{
		// argv[0] stays as written (programs that dispatch on their name
		// see what the scenario says); the kernel gets the checked path.
		Path: tg.executable, Args: append([]string{sc.Executable}, sc.Arguments...), Env: env,
		Dir: tg.dir, Files: []*os.File{tty, tty, tty}, Marker: marker,
		Name: "capture-" + opts.RunID, Setctty: true,
	})
	tty.Close()
	if err != nil {
		master.Close()
		return fmt.Errorf("capture: launch %s: %w", sc.Executable, err)
	}
	rec.Manifest.StartedAt = started.Format(TimeLayout)
	shims.serve(start)
	rec.Limitations = append(rec.Limitations, shims.notes()...)
	lb.Serve(start)
	rec.Limitations = append(rec.Limitations, lb.Notes()...)
	norm.addPID(tree.Pid())
	s := &session{
		sc: sc, tree: tree, master: master, start: start, shims: shims, lb: lb,
		rec:    &recorder{rec: rec, limits: sc.Limits, norm: norm, text: stream{literals: norm.literals}, scr: scr, fs: cps, async: rx == nil},
		chunks: make(chan chunk, readQueue), free: make(chan []byte, readQueue+2), quit: make(chan struct{}), readerDone: make(chan struct{}),
		jobs: make(chan int, len(sc.Events)+rx.capacity()), results: make(chan result, len(sc.Events)+rx.capacity()),
		dispatcherDone: make(chan struct{}), ended: make(chan struct{}),
	}
	rx.attach(s)
	cps.launched(start)
	s.rec.checkpoint(CheckpointBefore, 0)
	go s.read()
	go s.dispatch()
	s.noteMechanism(sup)
	err = s.observe(ctx)
	rx.finish(ctx)
	if s.rec.screenErr != nil {
		err = errors.Join(err, fmt.Errorf("capture: %w", s.rec.screenErr))
	}
	return err
}

// readQueue is how many chunks the reader queues for the loop, and
// readBuffer the size of one read.
const (
	readQueue  = 64
	readBuffer = 32 << 10
)

// read forwards PTY output until the master reports end of output (EIO
// once no process holds the terminal) or is closed. Its buffers come back
// through s.free once recorded (recycle), so a fast writer's megabytes do
// not become garbage.
func (s *session) read() {
	defer close(s.readerDone)
	defer close(s.chunks)
	for {
		var buf []byte
		select {
		case buf = <-s.free:
		default:
			buf = make([]byte, readBuffer)
		}
		n, err := s.master.Read(buf)
		if n > 0 && err == nil {
			n = readAvailable(s.master, buf, n)
		}
		if n > 0 {
			s.holding.Store(true)
			s.afterDispatch()
			select {
			case s.chunks <- chunk{buf[:n], time.Since(s.start)}:
			case <-s.quit:
				return
			}
			s.holding.Store(false)
		}
		if err != nil {
			return
		}
	}
}

// recycle hands a chunk's buffer back to the reader once recording has
// copied what it needs from it.
func (s *session) recycle(b []byte) {
	if cap(b) != readBuffer {
		return
	}
	select {
	case s.free <- b[:readBuffer]:
	default:
	}
}

// dispatch performs the scheduled events in order; an event is not
// performed once the root has exited or the recording loop has stopped
// (timeout, idle timeout, cancellation).
func (s *session) dispatch() {
	defer close(s.dispatcherDone)
	for i := range s.jobs {
		ev := s.event(i) // a timed event or a reactive action
		at := time.Since(s.start)
		s.inflight.Store(int64(at) + 1)
		outcome := OutcomeDispatched
		select {
		case <-s.tree.Exited():
			outcome = OutcomeTargetExited
		case <-s.ended:
			outcome = OutcomeTargetExited
		default:
			if err := s.perform(ev); err != nil {
				outcome = OutcomeFailed
			}
		}
		s.results <- result{i, at, outcome}
		s.inflight.Store(0)
	}
}

func (s *session) perform(ev Event) error {
	switch ev.Type {
	case EventInput:
		_, err := s.master.Write([]byte(ev.Data))
		return err
	case EventResize:
		return setSize(s.master, ev.Columns, ev.Rows)
	case EventStdinClose: // reactive close_stdin (reactive_run.go)
		_, err := s.master.Write([]byte{eofByte})
		return err
	case EventSignal:
		sig := map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}[ev.Signal]
		if sig == 0 {
			return fmt.Errorf("capture: unknown signal %q", ev.Signal)
		}
		return syscall.Kill(s.tree.Pid(), sig)
	}
	return fmt.Errorf("capture: unknown event type %q", ev.Type)
}

// noteMechanism says which ownership mechanism the supervisor used and,
// when only process groups and /proc sampling were available, keeps the
// residual unknown of missed short-lived descendants.
func (s *session) noteMechanism(sup *proctree.Supervisor) {
	r := s.rec.rec
	switch mech := sup.Mechanism(); mech {
	case "cgroup":
		r.Limitations = append(r.Limitations, "process ownership: per-tree cgroup v2 and child subreaper (membership from the cgroup and the cgroups below it, every orphan reparented to Gatehouse since the target started, and their descendants by /proc parent links; ended with cgroup.kill, confirmed empty; no PID namespace, so that signal events reach the target as sent); process_samples are 50 ms samples")
	case "subreaper":
		r.Limitations = append(r.Limitations, "process ownership: child subreaper (membership from every orphan reparented to Gatehouse since the target started and their descendants by /proc parent links; cgroup unavailable: "+sup.CgroupUnavailable()+"); process_samples are 50 ms samples")
	default:
		r.Limitations = append(r.Limitations, "process ownership: /proc parent-link scans of /proc only, without a child subreaper, so absence is not verified (cgroup unavailable: "+sup.CgroupUnavailable()+")")
		r.ResidualUnknowns = append(r.ResidualUnknowns, ResidualUnknown{Scope: "process", Reason: "processes were sampled every 50 ms without a cgroup or subreaper; short-lived or early-detached descendants may be missed"})
	}
	narrow := s.sc.Terminal.Columns < minColumns
	for _, ev := range s.sc.Events {
		narrow = narrow || (ev.Type == EventResize && ev.Columns < minColumns)
	}
	if narrow {
		r.Limitations = append(r.Limitations, fmt.Sprintf("rendered frames: xterm.js has at least %d columns, so the screens of a narrower terminal are %d columns wide (the PTY had the scenario's size)", minColumns, minColumns))
	}
	s.rendererNote = len(r.Limitations) // the version is known at the hello (drain)
	r.Limitations = append(r.Limitations,
		rendererLimitation(s.rec.scr.version),
		"rendered frames: serialized_state restores, in a reset xterm.js terminal of the frame's size, the visible screen (characters, colours, attributes), the active buffer, the cursor (a pending wrap included), its visibility and the modes xterm.js exposes; not scrollback, the normal buffer beneath an active alternate one, scroll margins, tab stops, character sets, hyperlinks, the pen or the saved cursor",
		"terminal query replies (DA, DSR, CPR) are not sent to the target",
		"normalization: literal replacements (secrets, sensitive input, paths, pids) hold across raw chunk boundaries, pids only once sampled; regular-expression patterns apply within one raw chunk; "+
			"rendered frames are xterm.js's screens of the normalized raw frames and are not normalized again, so text the output composes on the screen from pieces written apart (a match split across chunks, a pid printed before it was sampled) stays as the raw frames show it")
}

// rendererLimitation is the limitation naming the renderer's version.
func rendererLimitation(version string) string {
	return "rendered frames come from xterm.js itself (" + version + ") in a helper process run by the pinned Node, the viewer's terminal engine"
}

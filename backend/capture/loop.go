package capture

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// errCancelled ends the recording loop when ctx is done.
var errCancelled = errors.New("cancelled")

// observe records the target until it ends and settles, then ends the
// tree, drains the PTY and stops the helper goroutines. It always leaves
// the tree terminated and the master closed.
func (s *session) observe(ctx context.Context) error {
	reason, err := s.untilExit(ctx)
	var first emptyObservation
	if reason == ExitReasonExited {
		s.takeOutputBeforeExit() // order.go
		first = s.observeEmpty()
	}
	s.flushPending()
	s.retireScreen()
	close(s.ended)
	// Events not yet scheduled are reported as target_exited in order.
	for i := s.next; i < len(s.sc.Events); i++ {
		s.jobs <- i
	}
	close(s.jobs)
	r := s.rec.rec
	if reason == ExitReasonExited {
		r.Exit = s.exitStatus(reason)
		s.rec.journal("exit", 0)
		s.rootExitCheckpoints()
		r.Settlement, err = s.settle(ctx, first)
	} else {
		// timeout, idle timeout or cancellation: the tree was alive at the
		// capture's deadline and is ended now.
		c := s.tree.Terminate(proctree.Grace)
		select {
		case <-s.tree.Exited():
		case <-time.After(drainTimeout):
		}
		r.Exit = s.exitStatus(reason)
		s.rec.journal("exit", 0)
		s.rootExitCheckpoints()
		r.Settlement = Settlement{State: SettlementAliveAtDeadline, CleanupOutcome: cleanupOutcome(c)}
	}
	if r.Exit.Reason == "" { // cancelled
		r.Exit.Reason = ExitReasonTimeout
	}
	s.flushPending()
	s.rec.journal("settlement", 0)
	s.rec.eventCheckpoints(TriggerSettled)
	s.rec.checkpoint(CheckpointAfterSettlement, time.Since(s.start))
	final := s.tree.Terminate(proctree.Grace)
	r.Cleanup.OwnedProcessGroup = OwnedProcessGroupVerified
	if !final.Verified {
		r.Cleanup.OwnedProcessGroup = "unverified"
		err = errors.Join(err, fmt.Errorf("capture: processes %v of the owned tree remain: %w", final.Remaining, ErrCleanupIncomplete))
	}
	s.drain()
	return errors.Join(err, s.stopLoopback())
}

// untilExit runs the recording loop until the root exits, a timeout
// fires or ctx is done; it returns the exit reason ("" when cancelled).
func (s *session) untilExit(ctx context.Context) (string, error) {
	timeout := time.NewTimer(time.Duration(s.sc.TimeoutMS) * time.Millisecond)
	defer timeout.Stop()
	idleAfter := time.Duration(s.sc.IdleTimeoutMS) * time.Millisecond
	idle := time.NewTimer(idleAfter)
	defer idle.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	events := time.NewTimer(time.Hour)
	defer events.Stop()
	s.armEvents(events)
	for {
		select {
		case c, ok := <-s.chunks:
			if s.takeChunk(c, ok) {
				idle.Reset(idleAfter)
			}
		case res := <-s.results:
			s.takeResult(res)
		case a := <-s.rec.scr.helloC():
			s.rec.greeted(a)
		case a := <-s.rec.scr.answerC():
			s.frameArrived(a)
		case <-events.C:
			s.armEvents(events)
		case <-tick.C:
			s.rec.samples(s.tree.Members(), time.Since(s.start))
		case <-s.rec.fs.timerC():
			s.rec.dueCheckpoints()
		case c := <-shimCallsOf(s.shims):
			s.rec.shim(c)
		case o := <-s.lb.Observations():
			s.protocol(o)
		case <-s.rx.wakeC(): // reactive deadlines and stops (reactive_run.go)
			if s.rx.ended() {
				return ExitReasonTimeout, nil
			}
		case <-s.tree.Exited():
			return ExitReasonExited, nil
		case <-timeout.C:
			return ExitReasonTimeout, nil
		case <-idle.C:
			return ExitReasonIdleTimeout, nil
		case <-ctx.Done():
			return "", errCancelled
		}
	}
}

// armEvents hands every due event to the dispatcher and sets t for the
// next one (or leaves it stopped when none is left).
func (s *session) armEvents(t *time.Timer) {
	now := time.Since(s.start)
	for s.next < len(s.sc.Events) {
		due := time.Duration(s.sc.Events[s.next].AtMS) * time.Millisecond
		if due > now {
			t.Reset(due - now)
			return
		}
		s.jobs <- s.next
		s.next++
	}
	t.Stop()
}

// exitStatus reads the root's exit: a code only when it exited by itself,
// the signal when one ended it, neither when it could not be reaped.
func (s *session) exitStatus(reason string) Exit {
	e := Exit{Reason: reason}
	select {
	case <-s.tree.Exited():
	default:
		return e
	}
	code, sig := s.tree.ExitStatus()
	if sig != "" {
		e.Signal = &sig
	} else if reason == ExitReasonExited {
		e.Code = &code
	}
	return e
}

// settle polls the tree every pollInterval after the root exited: two
// consecutive empty observations are quiescence; otherwise, at settle_ms
// (but not before a second observation was possible), the tree is ended.
// With first (an empty tree seen at the exit, observeEmpty) settlement
// began then: first is its first observation, and the second comes a poll
// interval after it.
func (s *session) settle(ctx context.Context, first emptyObservation) (Settlement, error) {
	begin := time.Now()
	empty := 0
	if !first.at.IsZero() {
		begin, empty = first.at, 1
	}
	window := max(time.Duration(s.sc.SettleMS)*time.Millisecond, pollInterval)
	poll := time.NewTicker(pollInterval)
	defer poll.Stop()
	if empty == 1 { // the next observation comes a poll interval after it
		if err := s.wait(ctx, time.After(time.Until(begin.Add(pollInterval)))); err != nil {
			c := s.tree.Terminate(proctree.Grace)
			return Settlement{State: SettlementAliveAtDeadline, ElapsedMS: s.rec.norm.ms(ms(time.Since(begin))), CleanupOutcome: cleanupOutcome(c)}, err
		}
	}
	for {
		members := s.tree.Members()
		s.rec.samples(members, time.Since(s.start))
		if len(members) == 0 {
			empty++
		} else {
			empty = 0
		}
		elapsed := time.Since(begin)
		if empty >= 2 {
			return Settlement{State: SettlementQuiesced, ElapsedMS: s.rec.norm.ms(ms(elapsed)), CleanupOutcome: CleanupNotRequired}, nil
		}
		if elapsed >= window {
			c := s.tree.Terminate(proctree.Grace)
			return Settlement{State: SettlementAliveAtDeadline, ElapsedMS: s.rec.norm.ms(ms(elapsed)), CleanupOutcome: cleanupOutcome(c)}, nil
		}
		if err := s.wait(ctx, poll.C); err != nil {
			c := s.tree.Terminate(proctree.Grace)
			return Settlement{State: SettlementAliveAtDeadline, ElapsedMS: s.rec.norm.ms(ms(time.Since(begin))), CleanupOutcome: cleanupOutcome(c)}, err
		}
	}
}

// emptyObservation is settlement's first observation when it found the
// owned tree empty; its zero value means it found members (or none was
// taken), and settlement then starts after the renderer caught up.
type emptyObservation struct{ at time.Time }

// observeEmpty takes settlement's first observation as soon as the root's
// exit is seen, before the loop waits for the rendered frames it owes
// (flushPending), so the renderer's catching up and the first poll
// interval of settlement overlap. Only an empty tree is kept: it records
// nothing (no process sample, no pid for the normalizer), so the record
// is what it was; a tree with members is observed again, and recorded,
// when settlement starts.
func (s *session) observeEmpty() emptyObservation {
	if len(s.tree.Members()) == 0 {
		return emptyObservation{at: time.Now()}
	}
	return emptyObservation{}
}

// wait records observations until tick fires or ctx is done.
func (s *session) wait(ctx context.Context, tick <-chan time.Time) error {
	for {
		if more, err := s.recordNext(ctx, tick); !more {
			return err
		}
	}
}

// recordNext records the next observation — output (takeChunk), an event
// outcome, due time checkpoints, a shim call or a loopback exchange — and
// reports true; it reports false when stop fires first, with errCancelled
// when ctx is done first.
func (s *session) recordNext(ctx context.Context, stop <-chan time.Time) (bool, error) {
	s.retireScreen()
	select {
	case c, ok := <-s.chunks:
		s.takeChunk(c, ok)
	case res := <-s.results:
		s.takeResult(res)
	case a := <-s.rec.scr.helloC():
		s.rec.greeted(a)
	case a := <-s.rec.scr.answerC():
		s.frameArrived(a)
	case <-s.rec.fs.timerC():
		s.rec.dueCheckpoints()
	case c := <-shimCallsOf(s.shims):
		s.rec.shim(c)
	case o := <-s.lb.Observations():
		s.protocol(o)
	case <-stop:
		return false, nil
	case <-ctx.Done():
		return false, errCancelled
	}
	return true, nil
}

func cleanupOutcome(c proctree.Cleanup) string {
	if c.Verified {
		return CleanupCleaned
	}
	return CleanupFailed
}

// drain records the output still buffered in the PTY (the tree is gone,
// so the master reports its end soon), closes the master, stops the
// helpers and records the outcomes of the remaining events. (The
// checkpoints are closed by then, so recordNext takes none.)
func (s *session) drain() {
	deadline := time.NewTimer(drainTimeout)
	defer deadline.Stop()
	for s.chunks != nil {
		if more, _ := s.recordNext(context.Background(), deadline.C); !more {
			s.rec.rec.Limitations = append(s.rec.rec.Limitations, "the terminal did not report the end of output in time; later output was not recorded")
			s.chunks = nil
		}
	}
	s.flushPending()
	close(s.quit)
	s.master.Close()
	<-s.readerDone
	<-s.dispatcherDone
	s.takeResults()
	for _, c := range s.shims.stop() {
		s.rec.shim(c)
	}
	s.rec.flush(time.Since(s.start))
	s.rec.awaitRenderer() // a capture without output still needs its renderer's hello
	s.rec.awaitFrames()
	s.rec.rec.Limitations[s.rendererNote] = rendererLimitation(s.rec.scr.version)
	if s.rx == nil { // every answer is in: the helper is ended while run finishes
		s.rec.scr.retire()
	}
}

// retireScreen ends the renderer helper in the background (screen.retire)
// once the recording loop stopped and nothing can ask it for anything any
// more: its hello was taken, the PTY reported the end of output and every chunk was taken,
// no frame is owed, no output is pending or held back (drain's flush
// renders nothing), and no resize remains whose outcome could still be
// recorded (a dispatched one renders the screen at its size); reactive
// runs keep it to the end. The helper's end then overlaps settlement and
// the drain instead of following them, and the record is what it was.
func (s *session) retireScreen() {
	if s.retired || s.rx != nil || !s.rec.scr.said || s.rec.framesOwed() || len(s.pending) > 0 || len(s.rec.text.pending) > 0 || len(s.chunks) > 0 {
		return
	}
	select {
	case <-s.readerDone:
	default:
		return
	}
	for _, ev := range s.sc.Events[min(s.taken, len(s.sc.Events)):] {
		if ev.Type == EventResize {
			return
		}
	}
	s.retired = true
	s.rec.scr.retire()
}

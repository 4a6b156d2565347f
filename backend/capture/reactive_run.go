package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/reactive"
)

// EventStdinClose is the interaction type of a reactive close_stdin
// action.
const EventStdinClose = "stdin_close"

// eofByte is what close_stdin writes: the terminal's default end-of-file
// character (Ctrl-D). A PTY has no other way to end the target's input
// while the terminal stays open; in canonical mode at the start of a line
// it makes the target's read return 0.
const eofByte = 0x04

// reactiveRun drives a reactive.Runner inside one capture session
// (docs/formats/reactive-scenario.md). It runs on the recording
// goroutine, except action, which the dispatcher reads.
//
//   - Every event_journal entry is admitted to the runner as soon as it is
//     journaled, with the normalized and redacted text and payload that
//     are persisted (never raw bytes), so live predicates see exactly what
//     the record shows, in capture order.
//   - send_input, resize, close_stdin and send_signal actions go to the
//     target through the same dispatcher as timed events (timed events
//     already due are handed over first), so interaction_events keep one
//     order; each is recorded as an interaction event (sensitive input as
//     <redacted-input:N-bytes>, and its lines redacted from recorded text
//     like a secret) whose id is the action's evidence. Its
//     scheduled_at_ms is the bucketed time its transition fired, or the
//     at_ms of the last timed event handed over before it when that is
//     later. checkpoint actions take a filesystem checkpoint at once.
//   - A deadline (state: predicate_timeout, scenario: scenario_deadline)
//     or any other stop of the run while the target is alive ends the
//     capture as at timeout_ms (exit reason timeout), noted in
//     limitations; a passed run lets the capture go on until the target
//     exits. An interaction action that the dispatcher could not perform
//     stops the run as action_rejected, or target_lost when the root had
//     exited; a capture limit reached while the run is active stops it as
//     capture_incomplete.
//   - When the capture ends with the run still active, the outcome is
//     cancelled (ctx done), a deadline that has passed, cleanup_failed
//     (the owned tree could not be verified gone), target_lost (the root
//     exited before the graph finished) or capture_incomplete (timeout_ms
//     or idle_timeout_ms came first).
//
// Each control pins the capture order of the last observation admitted
// before it.
type reactiveRun struct {
	sc     *reactive.Scenario
	runner *reactive.Runner
	s      *session

	mu      sync.Mutex // guards actions, which the dispatcher reads
	actions []Event    // dispatched reactive actions; job len(sc.Events)+k

	mine    map[int]bool // interaction_events indices of reactive actions
	wake    chan struct{}
	timer   *time.Timer
	armed   int  // the deadline the timer is set for (-1: none)
	stopped bool // the recording loop has been ended by the run
}

// newReactiveRun prepares sc's reactive run (nil when sc has none).
func newReactiveRun(sc *Scenario) (*reactiveRun, error) {
	rs, err := reactiveScenario(sc)
	if err != nil || rs == nil {
		return nil, err
	}
	return &reactiveRun{sc: rs, mine: map[int]bool{}, wake: make(chan struct{}, 1), armed: -1}, nil
}

// capacity is the most dispatcher jobs the run can add.
func (x *reactiveRun) capacity() int {
	if x == nil {
		return 0
	}
	return x.sc.MaxDispatches()
}

// attach starts the run in s; call it before the first observation is
// journaled.
func (x *reactiveRun) attach(s *session) {
	if x == nil {
		return
	}
	x.s, s.rx, s.rec.rx = s, x, x
	x.runner = reactive.NewRunner(x.sc, x, func() int { return ms(time.Since(s.start)) }, s.sc.Normalization.TimeBucketMS)
	x.runner.Start()
	x.arm()
}

// event returns dispatcher job i: a timed event or a reactive action.
func (s *session) event(i int) Event {
	if i < len(s.sc.Events) {
		return s.sc.Events[i]
	}
	return s.rx.action(i - len(s.sc.Events))
}

func (x *reactiveRun) action(k int) Event {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.actions[k]
}

// wakeC is the channel the recording loop waits on for the run's
// deadlines and stops (nil without a run, so a select never takes it).
func (x *reactiveRun) wakeC() <-chan struct{} {
	if x == nil {
		return nil
	}
	return x.wake
}

func (x *reactiveRun) poke() {
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// arm sets the timer for the run's next deadline.
func (x *reactiveRun) arm() {
	d := x.runner.NextDeadline()
	if d == x.armed {
		return
	}
	x.armed = d
	if x.timer != nil {
		x.timer.Stop()
	}
	if d >= 0 {
		x.timer = time.AfterFunc(time.Until(x.s.start.Add(time.Duration(d)*time.Millisecond)), x.poke)
	}
}

// ended applies due deadlines and reports whether the recording loop
// should end because the run stopped without passing while the root is
// alive.
func (x *reactiveRun) ended() bool {
	x.runner.Expire()
	x.arm()
	if !x.runner.Done() || x.runner.Run().Outcome == reactive.OutcomePassed {
		return false
	}
	select {
	case <-x.s.tree.Exited():
		return false // the loop ends as exited
	default:
	}
	if !x.stopped {
		x.stopped = true
		x.s.rec.rec.Limitations = append(x.s.rec.rec.Limitations,
			fmt.Sprintf("reactive run: the capture was ended when the run stopped with %s", x.runner.Run().Outcome))
	}
	return true
}

// admit hands a journaled observation to the runner.
func (x *reactiveRun) admit(r *recorder, collection string, index int) {
	o := reactive.Observation{Collection: collection, Index: index}
	protocol := ""
	if collection == "protocol_events" {
		var p struct {
			Protocol string `json:"protocol"`
		}
		_ = json.Unmarshal(r.rec.ProtocolEvents[index], &p)
		protocol = p.Protocol
	}
	o.Source = reactive.SourceOf(collection, protocol)
	switch collection {
	case "frames":
		o.Text = r.rec.Frames[index].Data
	case "filesystem_checkpoints":
		o.Name = r.rec.FilesystemCheckpoints[index].Name
	}
	if x.runner.NeedsPayload(o.Source) {
		o.Payload = payloadOf(r.rec, collection, index)
	}
	x.runner.Admit(o)
	if collection == "interaction_events" && x.mine[index] {
		switch r.rec.InteractionEvents[index].Outcome {
		case OutcomeTargetExited:
			x.runner.Stop(reactive.OutcomeTargetLost)
		case OutcomeFailed:
			x.runner.Stop(reactive.OutcomeActionRejected)
		}
	}
	x.settle()
}

// incomplete stops an active run when a capture limit was reached.
func (x *reactiveRun) incomplete() {
	x.runner.Stop(reactive.OutcomeCaptureIncomplete)
	x.settle()
}

// settle re-arms the deadline timer and wakes the loop once the run has
// stopped.
func (x *reactiveRun) settle() {
	x.arm()
	if x.runner.Done() && x.runner.Run().Outcome != reactive.OutcomePassed {
		x.poke()
	}
}

// Perform carries out one action of a fired transition (reactive.Executor).
func (x *reactiveRun) Perform(a reactive.Action) (string, error) {
	s := x.s
	if a.Type == reactive.ActionCheckpoint {
		n := len(s.rec.rec.FilesystemCheckpoints)
		s.rec.checkpoint(a.Name, time.Since(s.start))
		if len(s.rec.rec.FilesystemCheckpoints) == n {
			return "", errors.New("capture: checkpoints are closed")
		}
		return fmt.Sprintf("filesystem_checkpoints[%d]", n), nil
	}
	select {
	case <-s.ended:
		select {
		case <-s.tree.Exited():
			return "", fmt.Errorf("capture: %s after the root exited: %w", a.Type, reactive.ErrTargetLost)
		default:
			return "", fmt.Errorf("capture: %s after the recording ended: %w", a.Type, reactive.ErrCaptureEnded)
		}
	default:
	}
	now := time.Since(s.start)
	floor := 0
	for s.next < len(s.sc.Events) && time.Duration(s.sc.Events[s.next].AtMS)*time.Millisecond <= now {
		s.jobs <- s.next
		s.next++
	}
	if s.next > 0 {
		floor = s.sc.Events[s.next-1].AtMS
	}
	ev := Event{AtMS: max(s.rec.norm.ms(ms(now)), floor)}
	switch a.Type {
	case reactive.ActionSendInput:
		ev.Type, ev.Data, ev.Sensitive = EventInput, a.Data, a.Sensitive
	case reactive.ActionResize:
		ev.Type, ev.Columns, ev.Rows = EventResize, a.Columns, a.Rows
	case reactive.ActionCloseStdin:
		ev.Type = EventStdinClose
	case reactive.ActionSendSignal:
		ev.Type, ev.Signal = EventSignal, a.Signal
	default:
		return "", fmt.Errorf("capture: unknown reactive action %q", a.Type)
	}
	x.mu.Lock()
	x.actions = append(x.actions, ev)
	k := len(x.actions) - 1
	x.mu.Unlock()
	index := s.next + k // every job handed before it records one interaction event first
	x.mine[index] = true
	s.jobs <- len(s.sc.Events) + k
	return fmt.Sprintf("interaction_events[%d]", index), nil
}

// finish ends a run still active when the capture ended and records it.
func (x *reactiveRun) finish(ctx context.Context) {
	if x == nil {
		return
	}
	if x.timer != nil {
		x.timer.Stop()
	}
	rec, r := x.s.rec.rec, x.runner
	if !r.Done() {
		switch {
		case ctx.Err() != nil:
			r.Stop(reactive.OutcomeCancelled)
		case r.Expire():
		case rec.Cleanup.OwnedProcessGroup != OwnedProcessGroupVerified:
			r.Stop(reactive.OutcomeCleanupFailed)
		case rec.Exit.Reason == ExitReasonExited:
			r.Stop(reactive.OutcomeTargetLost)
		default:
			r.Stop(reactive.OutcomeCaptureIncomplete)
		}
	}
	b, err := json.Marshal(r.Run())
	if err != nil { // a Run always marshals
		b = json.RawMessage("null")
	}
	rec.ReactiveRun = b
}

// payloadJSON decodes a recorded observation for event predicates.
var payloadJSON = strictjson.Options{MaxDepth: 64}

// payloadOf is the recorded object of one observation as a node tree.
func payloadOf(rec *Record, collection string, index int) *strictjson.Node {
	var v any
	switch collection {
	case "frames":
		v = rec.Frames[index]
	case "rendered_frames":
		v = rec.RenderedFrames[index]
	case "interaction_events":
		v = rec.InteractionEvents[index]
	case "process_samples":
		v = rec.ProcessSamples[index]
	case "filesystem_checkpoints":
		v = rec.FilesystemCheckpoints[index]
	case "shim_events":
		v = rec.ShimEvents[index]
	case "protocol_events":
		v = rec.ProtocolEvents[index]
	case "replay_transitions":
		v = rec.ReplayTransitions[index]
	default:
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return strictjson.Decode(b, "$", payloadJSON, &strictjson.Collector{Max: 1})
}

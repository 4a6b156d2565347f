package reactive

import (
	"errors"
	"fmt"
	"sort"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Outcomes of a run (docs/formats/reactive-scenario.md).
const (
	OutcomePassed            = "passed"
	OutcomePredicateTimeout  = "predicate_timeout"
	OutcomeScenarioDeadline  = "scenario_deadline"
	OutcomeAmbiguousMatch    = "ambiguous_match"
	OutcomeActionRejected    = "action_rejected"
	OutcomeTargetLost        = "target_lost"
	OutcomeCaptureIncomplete = "capture_incomplete"
	OutcomeCancelled         = "cancelled"
	OutcomeCleanupFailed     = "cleanup_failed"
)

// Statuses of a run.
const (
	StatusRunning   = "running"   // never recorded: a capture always ends its run
	StatusCompleted = "completed" // the graph reached a finish target (outcome passed)
	StatusStopped   = "stopped"   // a control ended the run (any other outcome)
)

// ErrTargetLost is wrapped by an Executor error when the action could not
// be performed because the target is gone; the run then ends as
// target_lost instead of action_rejected.
var ErrTargetLost = errors.New("the target is gone")

// ErrCaptureEnded is wrapped by an Executor error when the capture no
// longer records (its deadline passed); the run then ends as
// capture_incomplete.
var ErrCaptureEnded = errors.New("the capture has ended")

// Executor performs the actions of fired transitions for a Runner.
type Executor interface {
	// Perform carries out one action and returns the id of the
	// observation that records it ("interaction_events[2]",
	// "filesystem_checkpoints[3]"). It may admit observations to the
	// Runner while it runs (they are queued, not evaluated re-entrantly).
	Perform(a Action) (evidenceID string, err error)
}

// Observation is one journaled observation, exactly as persisted: the
// capture admits every event_journal entry in capture order.
type Observation struct {
	Collection string           // record list ("frames", …) or "exit"/"settlement"
	Index      int              // position in that list (0 for exit and settlement)
	Source     string           // SourceOf(Collection, protocol)
	Text       string           // terminal_raw: the frame's data
	Name       string           // filesystem: the checkpoint's name
	Payload    *strictjson.Node // the recorded object; required when NeedsPayload(Source)
}

// ID is the observation's event id: "collection[index]", or "exit" and
// "settlement" for the lifecycle entries.
func (o Observation) ID() string {
	if o.Collection == "exit" || o.Collection == "settlement" {
		return o.Collection
	}
	return fmt.Sprintf("%s[%d]", o.Collection, o.Index)
}

// SourceOf maps a journal collection to its event source, as trace
// comparison projects it (protocol events by their protocol).
func SourceOf(collection, protocol string) string {
	switch collection {
	case "frames":
		return SourceTerminalRaw
	case "rendered_frames":
		return SourceTerminalRendered
	case "interaction_events":
		return SourceInteraction
	case "process_samples":
		return SourceProcess
	case "filesystem_checkpoints":
		return SourceFilesystem
	case "shim_events":
		return SourceShim
	case "protocol_events":
		return protocol
	case "replay_transitions":
		return SourceReplayTransition
	}
	return SourceLifecycle
}

type observed struct {
	source  string
	id      string
	textEnd int // length of the terminal text up to and including it
	payload *strictjson.Node
}

type frameStart struct{ start, order int }

// Runner evaluates one reactive scenario live. It is used by one
// goroutine. Transitions are evaluated after every admitted observation
// and after every state entry: among the active state's transitions with
// uses left whose goto target has visits left, the highest priority
// satisfied one fires; two satisfied at that priority end the run as
// ambiguous_match. A terminal_text leaf matches the occurrence-th
// non-overlapping occurrence of its text in the concatenated raw frame
// text from its frontier (and after every consumed match); an event leaf
// the occurrence-th observation of its source, after its frontier, whose
// named fields equal exact. all needs every child from the same bound,
// any takes the child ending first, sequence starts each child after the
// previous one's end, and repeat is satisfied while the number of
// back-to-back child matches is within min–max. A state is entered at the
// end of the match that fired into it (events after the fired
// transition's actions, text after the match), so the journal does not
// depend on how output was chunked.
type Runner struct {
	sc     *Scenario
	exec   Executor
	clock  func() int // ms since launch
	bucket int
	need   map[string]bool
	order  [][]int // per state: transition indexes by priority, highest first

	state    int
	entry    pos
	entryMS  int
	visits   []int
	uses     [][]int
	consumed int

	obs         []observed
	text        []byte
	frames      []frameStart
	checkpoints map[string]int
	events      map[string]int
	wanted      map[string]bool // event ids named by frontiers
	cursors     map[cursorKey]*cursor

	busy  bool
	queue []Observation
	run   Run
}

// NewRunner prepares a run of sc whose clock gives the milliseconds since
// launch and whose recorded times are bucketed down to a multiple of
// bucket (the capture's time_bucket_ms). sc must come from Parse or
// Check (they index its triggers). Call Start before admitting.
func NewRunner(sc *Scenario, exec Executor, clock func() int, bucket int) *Runner {
	r := &Runner{sc: sc, exec: exec, clock: clock, bucket: max(bucket, 1), need: map[string]bool{},
		checkpoints: map[string]int{}, events: map[string]int{}, wanted: map[string]bool{},
		cursors: map[cursorKey]*cursor{}, visits: make([]int, len(sc.States)), uses: make([][]int, len(sc.States)),
		run: Run{Status: StatusRunning, Controls: []Control{}, Transitions: []Step{}}}
	r.order = make([][]int, len(sc.States))
	for i, st := range sc.States {
		r.uses[i] = make([]int, len(st.On))
		for j := range st.On {
			r.order[i] = append(r.order[i], j)
			walk(st.On[j].When, "", func(t *Trigger, _ string) {
				if t.Kind == KindEvent {
					r.need[t.Source] = true
				}
				if t.Since.Kind == SinceEventID {
					r.wanted[t.Since.ID] = true
				}
			})
		}
		on := st.On
		sort.SliceStable(r.order[i], func(a, b int) bool { return on[r.order[i][a]].Priority > on[r.order[i][b]].Priority })
	}
	return r
}

// NeedsPayload reports whether observations of source must carry their
// Payload (some event trigger reads that source).
func (r *Runner) NeedsPayload(source string) bool { return r.need[source] }

// Start enters the initial state.
func (r *Runner) Start() {
	for i, st := range r.sc.States {
		if st.ID == r.sc.InitialState {
			r.enter(i, origin)
		}
	}
	r.step()
}

// Done reports whether the run has ended.
func (r *Runner) Done() bool { return r.run.Status != StatusRunning }

// Run returns the run's record (reactive_run); its slices are the
// Runner's own until the run is done.
func (r *Runner) Run() Run { return r.run }

// NextDeadline is the launch-relative millisecond at which the active
// state's or the scenario's deadline expires (-1 once the run is done).
func (r *Runner) NextDeadline() int {
	if r.Done() {
		return -1
	}
	return min(r.sc.DeadlineMS, r.entryMS+r.sc.States[r.state].DeadlineMS)
}

// Expire ends the run when a deadline has passed by the clock: the
// earlier of the scenario deadline (scenario_deadline, also on a tie) and
// the state deadline (predicate_timeout). It reports whether it did.
func (r *Runner) Expire() bool {
	if r.Done() {
		return false
	}
	now := r.clock()
	scenario, state := r.sc.DeadlineMS, r.entryMS+r.sc.States[r.state].DeadlineMS
	switch {
	case now >= scenario && scenario <= state:
		r.Stop(OutcomeScenarioDeadline)
	case now >= state:
		r.Stop(OutcomePredicateTimeout)
	default:
		return false
	}
	return true
}

// Stop ends a running run with outcome (not passed), recording a control
// that pins the last admitted observation order. It does nothing once
// the run is done.
func (r *Runner) Stop(outcome string) {
	if r.Done() {
		return
	}
	r.run.Status, r.run.Outcome = StatusStopped, outcome
	r.run.ActiveState = r.sc.States[r.state].ID
	r.run.Controls = append(r.run.Controls, Control{Sequence: len(r.run.Controls), Kind: outcome,
		AtMS: r.now(), State: r.run.ActiveState, LastAdmittedOrder: r.lastOrder()})
}

func (r *Runner) now() int {
	v := r.clock()
	return v - v%r.bucket
}

func (r *Runner) lastOrder() *int {
	if len(r.obs) == 0 {
		return nil
	}
	o := len(r.obs) - 1
	return &o
}

// Admit adds the next journaled observation (its capture order is the
// number admitted before it) and evaluates the graph. Observations
// admitted while an action runs are evaluated after it.
func (r *Runner) Admit(o Observation) {
	r.queue = append(r.queue, o)
	if r.busy {
		return
	}
	r.busy = true
	defer func() { r.busy = false }()
	for len(r.queue) > 0 {
		next := r.queue[0]
		r.queue = r.queue[1:]
		r.record(next)
		r.step()
	}
}

// record appends an observation to the history (also once the run is
// done, so capture orders stay aligned).
func (r *Runner) record(o Observation) {
	order := len(r.obs)
	if o.Source == SourceTerminalRaw && o.Text != "" {
		r.frames = append(r.frames, frameStart{len(r.text), order})
		r.text = append(r.text, o.Text...)
	}
	id := o.ID()
	ob := observed{source: o.Source, id: id, textEnd: len(r.text)}
	if r.need[o.Source] {
		ob.payload = o.Payload
	}
	r.obs = append(r.obs, ob)
	if o.Source == SourceFilesystem && o.Name != "" {
		if _, seen := r.checkpoints[o.Name]; !seen {
			r.checkpoints[o.Name] = order
		}
	}
	if r.wanted[id] {
		r.events[id] = order
	}
}

// step fires transitions until none is satisfied or the run is done.
func (r *Runner) step() {
	for !r.Done() && r.fireOne() {
	}
}

// fireOne fires the active state's best satisfied transition, if any.
func (r *Runner) fireOne() bool {
	st := &r.sc.States[r.state]
	found, ambiguous := -1, false
	var m match
	for _, j := range r.order[r.state] {
		t := &st.On[j]
		if found >= 0 && t.Priority < st.On[found].Priority {
			break
		}
		if r.uses[r.state][j] >= t.MaxUses {
			continue
		}
		if t.Target.Kind == TargetGoto && r.visits[r.stateIndex(t.Target.State)] >= r.sc.States[r.stateIndex(t.Target.State)].MaxVisits {
			continue
		}
		got, ok := r.eval(t.When, origin)
		if !ok {
			continue
		}
		if found >= 0 {
			ambiguous = true
			break
		}
		found, m = j, got
	}
	if ambiguous {
		r.Stop(OutcomeAmbiguousMatch)
		return false
	}
	if found < 0 {
		return false
	}
	r.fire(found, m)
	return !r.Done()
}

func (r *Runner) stateIndex(id string) int {
	for i, st := range r.sc.States {
		if st.ID == id {
			return i
		}
	}
	return -1
}

// fire records transition j of the active state, performs its actions
// and enters its target.
func (r *Runner) fire(j int, m match) {
	st := &r.sc.States[r.state]
	t := &st.On[j]
	r.uses[r.state][j]++
	step := Step{Sequence: len(r.run.Transitions), AtMS: r.now(), TransitionID: t.ID, StateBefore: st.ID,
		MatchedEventIDs: append([]string{}, m.ids...), ActionEvidenceIDs: []string{}, AdmittedOrder: len(r.obs) - 1}
	if t.Target.Kind == TargetGoto {
		after := t.Target.State
		step.StateAfter = &after
	}
	r.run.Transitions = append(r.run.Transitions, step)
	rec := &r.run.Transitions[len(r.run.Transitions)-1]
	for _, end := range m.consumes {
		r.consumed = max(r.consumed, end)
	}
	for _, a := range t.Actions {
		id, err := r.exec.Perform(a)
		if err != nil {
			switch {
			case errors.Is(err, ErrTargetLost):
				r.Stop(OutcomeTargetLost)
			case errors.Is(err, ErrCaptureEnded):
				r.Stop(OutcomeCaptureIncomplete)
			default:
				r.Stop(OutcomeActionRejected)
			}
			return
		}
		rec.ActionEvidenceIDs = append(rec.ActionEvidenceIDs, id)
		if r.Done() { // the action itself stopped the run (a capture limit)
			return
		}
	}
	if t.Target.Kind == TargetFinish {
		r.run.Status, r.run.Outcome, r.run.ActiveState = StatusCompleted, OutcomePassed, st.ID
		return
	}
	// Observations the actions produced are before the new state's entry.
	r.enter(r.stateIndex(t.Target.State), pos{max(m.end.order, len(r.obs)-1+len(r.queue)), m.end.text})
}

// enter makes state i active at entry.
func (r *Runner) enter(i int, entry pos) {
	r.state, r.entry, r.entryMS = i, entry, r.clock()
	r.visits[i]++
	r.run.ActiveState = r.sc.States[i].ID
	clear(r.cursors)
}

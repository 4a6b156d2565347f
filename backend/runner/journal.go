package runner

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/backend/store"
)

// Lifecycle event types, in order: the consent pipeline emits the first
// three, the runner the rest.
const (
	EventProposed  = "proposed"
	EventDecided   = "decided"
	EventConsumed  = "consumed"
	EventStaged    = "staged"
	EventSpawned   = "spawned"
	EventProgress  = "progress"
	EventExited    = "exited"
	EventCleaned   = "cleaned"
	EventValidated = "validated"
	EventCompleted = "completed"
)

// Event is one lifecycle event of an attempt.
type Event struct {
	Type              string          `json:"type"`
	RunID             string          `json:"runId"`
	AttemptID         string          `json:"attemptId"`
	Agent             string          `json:"agent"`
	Skill             string          `json:"skill"`
	Revision          string          `json:"revision"`
	At                time.Time       `json:"at"`
	ExecutionReceiver string          `json:"execution_receiver"`
	Detail            json.RawMessage `json:"detail,omitempty"`
}

// History is where the runner stores events and finished attempts
// (*store.DB satisfies it).
type History interface {
	AppendRunEvent(ctx context.Context, e store.RunEvent) error
	RecordRun(ctx context.Context, r store.RunRecord) error
}

// Journal fans lifecycle events out to subscribers and stores them.
// Subscribers that fall behind lose events rather than stall a run.
type Journal struct {
	history History
	mu      sync.Mutex
	subs    map[chan Event]struct{}
	errs    func(error)
}

// NewJournal returns a Journal storing into history; storage errors are
// passed to onError (which may be nil).
func NewJournal(history History, onError func(error)) *Journal {
	return &Journal{history: history, subs: map[chan Event]struct{}{}, errs: onError}
}

// Subscribe returns a channel of future events and a function that ends
// the subscription.
func (j *Journal) Subscribe(buffer int) (<-chan Event, func()) {
	ch := make(chan Event, buffer)
	j.mu.Lock()
	j.subs[ch] = struct{}{}
	j.mu.Unlock()
	return ch, func() {
		j.mu.Lock()
		if _, ok := j.subs[ch]; ok {
			delete(j.subs, ch)
			close(ch)
		}
		j.mu.Unlock()
	}
}

// Emit stores e (progress events are not stored) and delivers it.
func (j *Journal) Emit(ctx context.Context, e Event) {
	e.ExecutionReceiver = receiver
	if e.At.IsZero() {
		e.At = time.Now().UTC()
	}
	if j.history != nil && e.Type != EventProgress {
		b, _ := json.Marshal(e)
		err := j.history.AppendRunEvent(context.WithoutCancel(ctx), store.RunEvent{RunID: e.RunID, AttemptID: e.AttemptID, Type: e.Type, At: e.At, Event: b})
		if err != nil && j.errs != nil {
			j.errs(err)
		}
	}
	j.mu.Lock()
	for ch := range j.subs {
		select {
		case ch <- e:
		default:
		}
	}
	j.mu.Unlock()
}

const receiver = "ephemeral_process"

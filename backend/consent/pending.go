package consent

import (
	"context"
	"sort"
	"time"
)

// The codes of a refused decision. Deciding a request that is not pending
// fails with exactly one of them, the same for proposals, plans and
// grants, and changes nothing.
const (
	// CodeUnknownRequest: no such request (never raised, or its run ended
	// and took it along).
	CodeUnknownRequest = "unknown_request"
	// CodeExpired: nobody decided within Window.
	CodeExpired = "expired"
	// CodeAlreadyDecided: a person approved or denied it already; what
	// happened to it after that (consumed, replaced, cancelled, voided)
	// does not change the answer.
	CodeAlreadyDecided = "already_decided"
	// CodeWithdrawn: it stopped waiting without a decision: replaced by a
	// newer request, cancelled (its requester gave up or its run ended),
	// or refused by the policy.
	CodeWithdrawn = "withdrawn"
)

// request is one request of any kind waiting for, or past, a person's
// decision. The fields common to every kind live here; data holds the
// kind's own. Every field is guarded by the Manager's lock.
type request[T any] struct {
	id, runID   string
	seq         uint64 // raise order within its book: oldest first, whatever the wall clock did
	state       State
	left        State // the state it left Pending for; "" while pending
	createdAt   time.Time
	createdMono time.Duration
	done        chan struct{} // closed when the request leaves Pending
	data        T
}

// kind is what differs between the kinds of request: how one is shown,
// which states its window ends, and what happens when one stops waiting.
type kind[T, V any] struct {
	name string // "proposal", "plan" or "grant": Event.Kind and messages
	// view returns a copy of the request's public state, sharing nothing
	// mutable with it.
	view func(*request[T]) V
	// event wraps a view for subscribers.
	event func(typ string, v V) Event
	// approvedExpires: the window ends an approved request too (a
	// proposal must be used within it), not only a pending one.
	approvedExpires bool
	// leftPending, when set, runs as a request leaves Pending.
	leftPending func(*request[T])
}

// book holds every request of one kind, by id and by run. All methods
// except wait must be called with m.mu held.
type book[T, V any] struct {
	m      *Manager
	kind   kind[T, V]
	byID   map[string]*request[T]
	byRun  map[string][]*request[T]
	raised uint64 // requests raised so far
}

func newBook[T, V any](m *Manager, k kind[T, V]) *book[T, V] {
	return &book[T, V]{m: m, kind: k, byID: map[string]*request[T]{}, byRun: map[string][]*request[T]{}}
}

// raise adds a pending request of run runID and tells subscribers.
func (b *book[T, V]) raise(runID string, data T) *request[T] {
	b.raised++
	r := &request[T]{id: newID(), runID: runID, seq: b.raised, state: Pending, createdAt: b.m.clock.Wall(), createdMono: b.m.clock.Mono(),
		done: make(chan struct{}), data: data}
	b.byID[r.id] = r
	b.byRun[runID] = append(b.byRun[runID], r)
	b.publish("raised", r)
	return r
}

// ofRun returns the requests run runID raised, oldest first, each with
// its window applied.
func (b *book[T, V]) ofRun(runID string) []*request[T] {
	rs := b.byRun[runID]
	for _, r := range rs {
		b.expire(r)
	}
	return rs
}

// lookup returns request id with its window applied.
func (b *book[T, V]) lookup(id string) (*request[T], bool) {
	r, ok := b.byID[id]
	if ok {
		b.expire(r)
	}
	return r, ok
}

func (b *book[T, V]) publish(typ string, r *request[T]) {
	b.m.broadcast(b.kind.event(typ, b.kind.view(r)))
}

// set moves r to s, wakes its waiters when it leaves Pending, and tells
// subscribers.
func (b *book[T, V]) set(r *request[T], s State) {
	if r.state == Pending && s != Pending {
		r.left = s
		close(r.done)
		if b.kind.leftPending != nil {
			b.kind.leftPending(r)
		}
	}
	r.state = s
	b.publish(string(s), r)
}

// expire ends a request whose window has passed: a pending one, or an
// approved one when the kind's approval lasts only the window.
func (b *book[T, V]) expire(r *request[T]) {
	if (r.state == Pending || (r.state == Approved && b.kind.approvedExpires)) && b.m.clock.Mono()-r.createdMono >= Window {
		b.set(r, Expired)
	}
}

// pending lists the requests waiting for a decision, oldest (first
// raised) first.
func (b *book[T, V]) pending() []V {
	var rs []*request[T]
	for _, r := range b.byID {
		if b.expire(r); r.state == Pending {
			rs = append(rs, r)
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].seq < rs[j].seq })
	out := make([]V, len(rs))
	for i, r := range rs {
		out[i] = b.kind.view(r)
	}
	return out
}

// get returns a copy of request id's state.
func (b *book[T, V]) get(id string) (V, bool) {
	r, ok := b.lookup(id)
	if !ok {
		var zero V
		return zero, false
	}
	return b.kind.view(r), true
}

// decide records a person's decision on pending request id: Approved
// (after approve, when set, filled in the kind's details of the approval)
// or Denied. Any other request is refused with the one decision rule
// (decisionError) and left as it was.
func (b *book[T, V]) decide(id string, approved bool, approve func(*request[T])) (V, error) {
	r, ok := b.lookup(id)
	if !ok {
		var zero V
		return zero, refuse(CodeUnknownRequest, "no %s %s", b.kind.name, id)
	}
	if r.state != Pending {
		return b.kind.view(r), b.decisionError(r)
	}
	if !approved {
		b.set(r, Denied)
		return b.kind.view(r), nil
	}
	if approve != nil {
		approve(r)
	}
	b.set(r, Approved)
	return b.kind.view(r), nil
}

// decisionError is the one rule for deciding a request that left
// Pending: how it left decides the code, whatever happened after.
func (b *book[T, V]) decisionError(r *request[T]) *Error {
	switch r.left {
	case Approved, Denied:
		return refuse(CodeAlreadyDecided, "the %s was already %s (it is now %s); only a pending %s can be decided", b.kind.name, r.left, r.state, b.kind.name)
	case Expired:
		return refuse(CodeExpired, "nobody decided the %s within %s; it can no longer be decided", b.kind.name, Window)
	default:
		return refuse(CodeWithdrawn, "the %s was withdrawn undecided (%s); only a pending %s can be decided", b.kind.name, r.left, b.kind.name)
	}
}

// withdraw ends request id with state to (Cancelled, PolicyRefused) if it
// is pending, or, when approvedToo, approved and not yet used. Anything
// else, and an unknown id, is left alone.
func (b *book[T, V]) withdraw(id string, to State, approvedToo bool) {
	if r, ok := b.lookup(id); ok && (r.state == Pending || (approvedToo && r.state == Approved)) {
		b.set(r, to)
	}
}

// endRun cancels every live request of run runID and forgets them all.
func (b *book[T, V]) endRun(runID string) {
	for _, r := range b.ofRun(runID) {
		if !r.state.Terminal() {
			b.set(r, Cancelled)
		}
		delete(b.byID, r.id)
	}
	delete(b.byRun, runID)
}

// wait blocks until request id leaves Pending (a decision, its window
// ending on the Manager's clock, replacement, withdrawal, the run's end)
// or ctx ends, and returns its state then. It takes m.mu itself.
func (b *book[T, V]) wait(ctx context.Context, id string) (V, error) {
	var zero V
	b.m.mu.Lock()
	r, ok := b.lookup(id)
	if !ok {
		b.m.mu.Unlock()
		return zero, refuse(CodeUnknownRequest, "no %s %s", b.kind.name, id)
	}
	done, deadline := r.done, r.createdMono+Window
	b.m.mu.Unlock()
	expire := func() { b.m.mu.Lock(); b.expire(r); b.m.mu.Unlock() }
	if err := waitUntil(ctx, b.m.clock, done, deadline, expire); err != nil {
		return zero, err
	}
	b.m.mu.Lock()
	defer b.m.mu.Unlock()
	return b.kind.view(r), nil
}

// waitUntil blocks until done is closed or ctx ends. At deadline on clock
// it calls expire, which closes done when the window has really passed;
// a timer that fired early (a scaled clock's rounding) is armed again.
// Nothing polls: the clock signals.
func waitUntil(ctx context.Context, clock Clock, done <-chan struct{}, deadline time.Duration, expire func()) error {
	for {
		fired, stop := clock.AfterMono(deadline)
		select {
		case <-done:
			stop()
			return nil
		case <-ctx.Done():
			stop()
			return ctx.Err()
		case <-fired:
			expire()
			select {
			case <-done:
				return nil
			default:
			}
		}
	}
}

package app

import (
	"sync"

	"github.com/gatehouse/gatehouse/backend/consent"
)

// pendingViews holds what the dialogs show about each request of one kind
// (proposal, plan or grant), by request id, from the moment its asker
// raises it until a minute after its run ended. The lifecycle itself is
// consent's; these are only the details the facade adds to it (agent
// name, files, warning), kept current from consent's events. One type
// serves the three kinds, so they are raised, updated, listed and
// forgotten the same way. It is safe for concurrent use.
type pendingViews[V any] struct {
	name     string // the UI event name and payload key: "proposal", "plan" or "grant"
	runOf    func(*V) string
	setState func(*V, consent.State)
	hub      *hub

	mu   sync.Mutex
	byID map[string]*V
}

func newPendingViews[V any](name string, h *hub, runOf func(*V) string, setState func(*V, consent.State)) *pendingViews[V] {
	return &pendingViews[V]{name: name, runOf: runOf, setState: setState, hub: h, byID: map[string]*V{}}
}

// raise stores v as request id's view and tells the UI it was raised.
func (p *pendingViews[V]) raise(id string, v V) {
	p.mu.Lock()
	p.byID[id] = &v
	p.mu.Unlock()
	p.hub.publish(p.name, map[string]any{"type": "raised", p.name: v})
}

// update applies fn (when set) to request id's view and returns a copy
// of it, or false when no view is stored under id. Views are replaced,
// never mutated through their slices, so a shallow copy is safe to hand
// out.
func (p *pendingViews[V]) update(id string, fn func(*V)) (V, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.byID[id]
	if !ok {
		var zero V
		return zero, false
	}
	if fn != nil {
		fn(v)
	}
	return *v, true
}

// note applies a consent event of type typ about request id to its view
// through fn and forwards the updated view to the UI. An event about a
// request without a view (one raised by no asker of this facade) is
// dropped.
func (p *pendingViews[V]) note(typ, id string, fn func(*V)) {
	if v, ok := p.update(id, fn); ok {
		p.hub.publish(p.name, map[string]any{"type": typ, p.name: v})
	}
}

// forgetRun drops the views of every request of run runID.
func (p *pendingViews[V]) forgetRun(runID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, v := range p.byID {
		if p.runOf(v) == runID {
			delete(p.byID, id)
		}
	}
}

// pendingOf returns the views of reqs, consent's list of this kind's
// pending requests (in its order), each with its state as consent has it;
// a request raised by no asker of this facade has no view and is left
// out.
func pendingOf[R, V any](p *pendingViews[V], reqs []R, idState func(R) (string, consent.State)) []V {
	out := []V{}
	for _, r := range reqs {
		id, s := idState(r)
		if v, ok := p.update(id, func(v *V) { p.setState(v, s) }); ok {
			out = append(out, v)
		}
	}
	return out
}

// decided brings request id's view up to date with the outcome of a
// decision on it: its state s (when consent still knows the request) and,
// when the decision was recorded, what more adds (nil: nothing). A
// refused decision is returned as the facade's error with consent's code
// (docs/api.md "Decision errors") and, when consent still knows the
// request, details {state} (so a dialog shows at once what became of it),
// together with the view as it stands.
func (p *pendingViews[V]) decided(id string, s consent.State, err error, more func(*V)) (V, error) {
	v, _ := p.update(id, func(v *V) {
		if s != "" {
			p.setState(v, s)
		}
		if err == nil && more != nil {
			more(v)
		}
	})
	if err != nil {
		e := errorf(consent.Code(err), "consent", "%v", err)
		if s != "" {
			e.Details = map[string]string{"state": string(s)}
		}
		return v, e
	}
	return v, nil
}

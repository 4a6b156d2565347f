package consent

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Proposal is a copy of one proposal's public state.
type Proposal struct {
	ID        string    `json:"id"`
	RunID     string    `json:"runId"`
	Binding   Binding   `json:"binding"`
	State     State     `json:"state"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Event kinds: what an Event is about.
const (
	KindProposal = "proposal"
	KindPlan     = "plan"
	KindGrant    = "grant"
)

// Event reports a change to subscribers (the UI). Kind says which of
// Proposal, Plan or Grant it is about; the others are zero.
type Event struct {
	Kind     string   `json:"kind"`
	Type     string   `json:"type"` // raised, or the new state
	Proposal Proposal `json:"proposal"`
	Plan     *Plan    `json:"plan,omitempty"`
	Grant    *Grant   `json:"grant,omitempty"`
}

type proposal struct {
	Proposal
	createdMono time.Duration
	done        chan struct{} // closed when the proposal leaves Pending
}

type run struct {
	id, agentID string
	ended       bool
	proposals   []*proposal
	plan        *plan
	grants      []*grant
}

// Manager is the in-memory consent state of one process. It is safe for
// concurrent use; every transition happens under one lock, so two
// consumers of one grant cannot both win.
type Manager struct {
	clock Clock

	mu     sync.Mutex
	runs   map[string]*run
	props  map[string]*proposal
	plans  map[string]*plan
	grants map[string]*grant
	subs   map[chan Event]struct{}
	// pending holds each agent's proposals still waiting for a person, so
	// MaxPendingPerAgent holds across all of the agent's runs.
	pending map[string]map[*proposal]struct{}
}

// NewManager returns an empty Manager using clock (SystemClock in
// production, a fake in tests).
func NewManager(clock Clock) *Manager {
	return &Manager{clock: clock, runs: map[string]*run{}, props: map[string]*proposal{}, plans: map[string]*plan{},
		grants: map[string]*grant{}, subs: map[chan Event]struct{}{}, pending: map[string]map[*proposal]struct{}{}}
}

// Subscribe returns future events and a function ending the subscription.
// A subscriber that falls behind loses events; it never blocks consent.
func (m *Manager) Subscribe(buffer int) (<-chan Event, func()) {
	ch := make(chan Event, buffer)
	m.mu.Lock()
	m.subs[ch] = struct{}{}
	m.mu.Unlock()
	return ch, func() {
		m.mu.Lock()
		if _, ok := m.subs[ch]; ok {
			delete(m.subs, ch)
			close(ch)
		}
		m.mu.Unlock()
	}
}

// publish must be called with m.mu held.
func (m *Manager) publish(typ string, p *proposal) {
	m.broadcast(Event{Kind: KindProposal, Type: typ, Proposal: p.Proposal})
}

// broadcast must be called with m.mu held.
func (m *Manager) broadcast(e Event) {
	for ch := range m.subs {
		select {
		case ch <- e:
		default:
		}
	}
}

// StartRun opens a run for agentID and returns its id.
func (m *Manager) StartRun(agentID string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := newID()
	m.runs[id] = &run{id: id, agentID: agentID}
	return id
}

// EndRun completes or aborts a run: every pending or approved proposal of
// it is cancelled, and its plan and capture grants with them.
func (m *Manager) EndRun(runID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[runID]
	if !ok {
		return refuse("unknown_run", "no live run %s", runID)
	}
	r.ended = true
	for _, p := range r.proposals {
		m.expireLocked(p)
		if !p.State.Terminal() {
			m.setLocked(p, Cancelled)
		}
	}
	if p := r.plan; p != nil {
		m.expirePlanLocked(p)
		if p.State == PlanPending || p.State == PlanApproved {
			m.setPlanLocked(p, PlanCancelled)
		}
		delete(m.plans, p.ID)
	}
	r.plan = nil
	for _, g := range r.grants {
		m.expireGrantLocked(g)
		if !g.State.Terminal() {
			m.setGrantLocked(g, Cancelled)
		}
		delete(m.grants, g.ID)
	}
	r.grants = nil
	delete(m.runs, runID)
	for _, p := range r.proposals {
		delete(m.props, p.ID)
	}
	return nil
}

// liveRunLocked returns the live run runID if it belongs to agentID.
// m.mu must be held.
func (m *Manager) liveRunLocked(runID, agentID string) (*run, error) {
	r, ok := m.runs[runID]
	if !ok || r.ended {
		return nil, refuse("unknown_run", "no live run %s", runID)
	}
	if r.agentID != agentID {
		return nil, refuse("wrong_agent", "run %s belongs to another agent", runID)
	}
	return r, nil
}

// setLocked moves p to s and wakes its waiters. m.mu must be held.
func (m *Manager) setLocked(p *proposal, s State) {
	wasPending := p.State == Pending
	p.State = s
	if wasPending {
		close(p.done)
		if set := m.pending[p.Binding.AgentID]; set != nil {
			delete(set, p)
			if len(set) == 0 {
				delete(m.pending, p.Binding.AgentID)
			}
		}
	}
	m.publish(string(s), p)
}

// expireLocked turns a live proposal whose window has passed into Expired.
func (m *Manager) expireLocked(p *proposal) {
	if !p.State.Terminal() && m.clock.Mono()-p.createdMono >= Window {
		m.setLocked(p, Expired)
	}
}

// Propose raises a pending proposal for b in b's run. Pending or approved
// proposals of the same run for the same skill become stale. A run keeps
// at most MaxProposalsPerRun proposals, and an agent at most
// MaxPendingPerAgent proposals waiting for a person across all its runs;
// the next one is refused (too_many_proposals, too_many_pending).
func (m *Manager) Propose(b Binding) (Proposal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.liveRunLocked(b.RunID, b.AgentID)
	if err != nil {
		return Proposal{}, err
	}
	if len(r.proposals) >= MaxProposalsPerRun {
		return Proposal{}, refuse("too_many_proposals", "run %s already has %d proposals", b.RunID, MaxProposalsPerRun)
	}
	for old := range m.pending[b.AgentID] { // at most MaxPendingPerAgent
		m.expireLocked(old)
	}
	if len(m.pending[b.AgentID]) >= MaxPendingPerAgent {
		return Proposal{}, refuse("too_many_pending", "agent %s already has %d requests waiting for a decision; wait for them to be decided or expire", b.AgentID, MaxPendingPerAgent)
	}
	for _, old := range r.proposals {
		m.expireLocked(old)
		if !old.State.Terminal() && old.Binding.Skill == b.Skill {
			m.setLocked(old, Stale)
		}
	}
	wall := m.clock.Wall()
	p := &proposal{
		Proposal:    Proposal{ID: newID(), RunID: b.RunID, Binding: b, State: Pending, CreatedAt: wall, ExpiresAt: wall.Add(Window)},
		createdMono: m.clock.Mono(), done: make(chan struct{}),
	}
	r.proposals = append(r.proposals, p)
	m.props[p.ID] = p
	if m.pending[b.AgentID] == nil {
		m.pending[b.AgentID] = map[*proposal]struct{}{}
	}
	m.pending[b.AgentID][p] = struct{}{}
	m.publish("raised", p)
	return p.Proposal, nil
}

// Get returns a proposal's current state.
func (m *Manager) Get(id string) (Proposal, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.props[id]
	if !ok {
		return Proposal{}, false
	}
	m.expireLocked(p)
	return p.Proposal, true
}

// Pending lists the proposals waiting for a decision, oldest first.
func (m *Manager) Pending() []Proposal {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Proposal
	for _, p := range m.props {
		m.expireLocked(p)
		if p.State == Pending {
			out = append(out, p.Proposal)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// Decide records the person's decision on a pending proposal. A second
// decision, whether the same or the opposite, is an error and changes
// nothing; so is deciding an expired, stale or cancelled proposal.
func (m *Manager) Decide(id string, approve bool) (Proposal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.props[id]
	if !ok {
		return Proposal{}, refuse("unknown_proposal", "no proposal %s", id)
	}
	m.expireLocked(p)
	if p.State != Pending {
		code := "already_decided"
		if p.State.Terminal() && p.State != Denied && p.State != Consumed {
			code = string(p.State)
		}
		return p.Proposal, refuse(code, "proposal is %s; only a pending proposal can be decided", p.State)
	}
	if approve {
		m.setLocked(p, Approved)
	} else {
		m.setLocked(p, Denied)
	}
	return p.Proposal, nil
}

// Wait blocks until the proposal leaves Pending (a decision, expiry,
// replacement or cancellation) or ctx ends, and returns its state.
func (m *Manager) Wait(ctx context.Context, id string) (Proposal, error) {
	m.mu.Lock()
	p, ok := m.props[id]
	if !ok {
		m.mu.Unlock()
		return Proposal{}, refuse("unknown_proposal", "no proposal %s", id)
	}
	m.expireLocked(p)
	done := p.done
	m.mu.Unlock()
	if err := waitUntil(ctx, done, func() bool { got, _ := m.Get(id); return got.State != Pending }); err != nil {
		return Proposal{}, err
	}
	got, _ := m.Get(id)
	return got, nil
}

// Consume spends an approved proposal for exactly the binding b, once.
// Under concurrency exactly one caller wins. A binding that differs in any
// field voids the proposal (binding_changed).
func (m *Manager) Consume(id string, b Binding) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.props[id]
	if !ok {
		return refuse("unknown_proposal", "no proposal %s", id)
	}
	m.expireLocked(p)
	switch p.State {
	case Approved:
	case Consumed:
		return refuse("already_consumed", "this consent was already used")
	case Pending:
		return refuse("not_approved", "the proposal has not been approved")
	default:
		return refuse(string(p.State), "the proposal is %s", p.State)
	}
	if p.Binding != b {
		m.setLocked(p, BindingChanged)
		return refuse("binding_changed", "what would run differs from what was approved")
	}
	m.setLocked(p, Consumed)
	return nil
}

// Cancel ends a live proposal because its requester gave up waiting
// (the state is Cancelled, not a refusal).
func (m *Manager) Cancel(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.props[id]; ok && !p.State.Terminal() {
		m.setLocked(p, Cancelled)
	}
}

// RefuseByPolicy ends a live proposal because the policy, re-read before
// launch, no longer allows it.
func (m *Manager) RefuseByPolicy(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.props[id]; ok && !p.State.Terminal() {
		m.setLocked(p, PolicyRefused)
	}
}

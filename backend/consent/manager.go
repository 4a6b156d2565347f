package consent

import (
	"context"
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

type run struct {
	id, agentID string
	ended       bool
}

// Manager is the in-memory consent state of one process. It is safe for
// concurrent use; every transition happens under one lock, so two
// consumers of one grant cannot both win. Proposals, plans and grants
// share one lifecycle (pending.go); each kind adds only how it is
// replaced and consumed.
type Manager struct {
	clock Clock

	mu     sync.Mutex
	runs   map[string]*run
	props  *book[Binding, Proposal]
	plans  *book[planData, Plan]
	grants *book[grantData, Grant]
	subs   map[chan Event]struct{}
	// pending holds each agent's proposals still waiting for a person, so
	// MaxPendingPerAgent holds across all of the agent's runs.
	pending map[string]map[*request[Binding]]struct{}
}

// NewManager returns an empty Manager using clock (SystemClock in
// production, a ManualClock in tests).
func NewManager(clock Clock) *Manager {
	m := &Manager{clock: clock, runs: map[string]*run{}, subs: map[chan Event]struct{}{}, pending: map[string]map[*request[Binding]]struct{}{}}
	m.props = newBook(m, kind[Binding, Proposal]{
		name: "proposal", view: proposalView, approvedExpires: true,
		event:       func(typ string, v Proposal) Event { return Event{Kind: KindProposal, Type: typ, Proposal: v} },
		leftPending: m.unpend,
	})
	m.plans = newBook(m, kind[planData, Plan]{name: "plan", view: planView,
		event: func(typ string, v Plan) Event { return Event{Kind: KindPlan, Type: typ, Plan: &v} }})
	m.grants = newBook(m, kind[grantData, Grant]{name: "grant", view: grantView,
		event: func(typ string, v Grant) Event { return Event{Kind: KindGrant, Type: typ, Grant: &v} }})
	return m
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
	m.props.endRun(runID)
	m.plans.endRun(runID)
	m.grants.endRun(runID)
	delete(m.runs, runID)
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

// unpend drops a proposal that left Pending from its agent's count.
// m.mu must be held.
func (m *Manager) unpend(p *request[Binding]) {
	if set := m.pending[p.data.AgentID]; set != nil {
		delete(set, p)
		if len(set) == 0 {
			delete(m.pending, p.data.AgentID)
		}
	}
}

// proposalView is a proposal's public state.
func proposalView(p *request[Binding]) Proposal {
	return Proposal{ID: p.id, RunID: p.runID, Binding: p.data, State: p.state, CreatedAt: p.createdAt, ExpiresAt: p.createdAt.Add(Window)}
}

// Propose raises a pending proposal for b in b's run. Pending or approved
// proposals of the same run for the same skill become stale. A run keeps
// at most MaxProposalsPerRun proposals, and an agent at most
// MaxPendingPerAgent proposals waiting for a person across all its runs;
// the next one is refused (too_many_proposals, too_many_pending).
func (m *Manager) Propose(b Binding) (Proposal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.liveRunLocked(b.RunID, b.AgentID); err != nil {
		return Proposal{}, err
	}
	if len(m.props.byRun[b.RunID]) >= MaxProposalsPerRun {
		return Proposal{}, refuse("too_many_proposals", "run %s already has %d proposals", b.RunID, MaxProposalsPerRun)
	}
	for old := range m.pending[b.AgentID] { // at most MaxPendingPerAgent
		m.props.expire(old)
	}
	if len(m.pending[b.AgentID]) >= MaxPendingPerAgent {
		return Proposal{}, refuse("too_many_pending", "agent %s already has %d requests waiting for a decision; wait for them to be decided or expire", b.AgentID, MaxPendingPerAgent)
	}
	// Replacing: a newer request for a skill stales the live ones of the run.
	for _, old := range m.props.ofRun(b.RunID) {
		if !old.state.Terminal() && old.data.Skill == b.Skill {
			m.props.set(old, Stale)
		}
	}
	p := m.props.raise(b.RunID, b)
	if m.pending[b.AgentID] == nil {
		m.pending[b.AgentID] = map[*request[Binding]]struct{}{}
	}
	m.pending[b.AgentID][p] = struct{}{}
	return proposalView(p), nil
}

// Get returns a proposal's current state.
func (m *Manager) Get(id string) (Proposal, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.props.get(id)
}

// Pending lists the proposals waiting for a decision, oldest first.
func (m *Manager) Pending() []Proposal {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.props.pending()
}

// Decide records the person's decision on a pending proposal. Deciding
// any other proposal changes nothing and fails with the decision rule's
// code: CodeUnknownRequest, CodeExpired, CodeAlreadyDecided or
// CodeWithdrawn.
func (m *Manager) Decide(id string, approve bool) (Proposal, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.props.decide(id, approve, nil)
}

// Wait blocks until the proposal leaves Pending (a decision, expiry,
// replacement or cancellation) or ctx ends, and returns its state.
func (m *Manager) Wait(ctx context.Context, id string) (Proposal, error) {
	return m.props.wait(ctx, id)
}

// Consume spends an approved proposal for exactly the binding b, once.
// Under concurrency exactly one caller wins. A binding that differs in any
// field voids the proposal (binding_changed). Its refusal codes are those
// a launch records: unknown_proposal, already_consumed, not_approved, or
// the proposal's state.
func (m *Manager) Consume(id string, b Binding) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.props.lookup(id)
	if !ok {
		return refuse("unknown_proposal", "no proposal %s", id)
	}
	switch p.state {
	case Approved:
	case Consumed:
		return refuse("already_consumed", "this consent was already used")
	case Pending:
		return refuse("not_approved", "the proposal has not been approved")
	default:
		return refuse(string(p.state), "the proposal is %s", p.state)
	}
	if p.data != b {
		m.props.set(p, BindingChanged)
		return refuse("binding_changed", "what would run differs from what was approved")
	}
	m.props.set(p, Consumed)
	return nil
}

// Cancel ends a live (pending or approved) proposal because its requester
// gave up waiting (the state is Cancelled, not a refusal).
func (m *Manager) Cancel(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.props.withdraw(id, Cancelled, true)
}

// RefuseByPolicy ends a live proposal because the policy, re-read before
// launch, no longer allows it.
func (m *Manager) RefuseByPolicy(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.props.withdraw(id, PolicyRefused, true)
}

package consent

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// GrantScope is how far a person's approval of a capture grant reaches.
type GrantScope string

// Grant scopes. A once grant authorizes exactly one capture of exactly the
// approved request; a session grant authorizes every later capture of the
// same connection whose request stays inside the approved one, until the
// connection (run) ends.
const (
	ScopeOnce    GrantScope = "once"
	ScopeSession GrantScope = "session"
)

// MaxGrantsPerRun bounds the capture grants one run (connection) may ask
// for, as MaxProposalsPerRun bounds proposals.
const MaxGrantsPerRun = 64

// GrantRequest is what a capture asks to be allowed: the operator-policy
// facts of one scenario.
type GrantRequest struct {
	Executable      string   `json:"executable"`
	WorkingDir      string   `json:"workingDir"`
	EnvNames        []string `json:"envNames"`
	FilesystemRoots []string `json:"filesystemRoots"`
	ExternalNetwork bool     `json:"externalNetwork"`
}

// Covers reports whether a capture asking for r stays inside what g
// allows: the same executable and working directory, environment names a
// subset, every filesystem root equal to or under an allowed one, and
// host networking only if allowed.
func (g GrantRequest) Covers(r GrantRequest) bool {
	if filepath.Clean(g.Executable) != filepath.Clean(r.Executable) || filepath.Clean(g.WorkingDir) != filepath.Clean(r.WorkingDir) {
		return false
	}
	if r.ExternalNetwork && !g.ExternalNetwork {
		return false
	}
	for _, n := range r.EnvNames {
		if !slices.Contains(g.EnvNames, n) {
			return false
		}
	}
	for _, root := range r.FilesystemRoots {
		if !slices.ContainsFunc(g.FilesystemRoots, func(a string) bool { return within(root, a) }) {
			return false
		}
	}
	return true
}

// within reports whether p equals root or continues it after a "/", after
// cleaning both.
func within(p, root string) bool {
	p, root = filepath.Clean(p), filepath.Clean(root)
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// Grant is a copy of one capture grant's public state. States are those of
// proposals: pending, approved (live), then denied, consumed, expired or
// cancelled.
type Grant struct {
	ID        string       `json:"id"`
	RunID     string       `json:"runId"`
	AgentID   string       `json:"agentId"`
	Request   GrantRequest `json:"request"`
	State     State        `json:"state"`
	Scope     GrantScope   `json:"scope,omitempty"` // chosen by the person when approving
	Uses      int          `json:"uses"`
	CreatedAt time.Time    `json:"createdAt"`
	ExpiresAt time.Time    `json:"expiresAt"`
}

type grant struct {
	Grant
	createdMono time.Duration
	done        chan struct{} // closed when the grant leaves Pending
}

func (g *grant) copy() Grant {
	c := g.Grant
	c.Request.EnvNames = slices.Clone(g.Request.EnvNames)
	c.Request.FilesystemRoots = slices.Clone(g.Request.FilesystemRoots)
	return c
}

// setGrantLocked moves g to s, wakes its waiters and tells subscribers.
// m.mu must be held.
func (m *Manager) setGrantLocked(g *grant, s State) {
	if g.State == Pending {
		close(g.done)
	}
	g.State = s
	c := g.copy()
	m.broadcast(Event{Kind: KindGrant, Type: string(s), Grant: &c})
}

// expireGrantLocked expires a grant nobody decided within Window. An
// approved session grant lives as long as its run.
func (m *Manager) expireGrantLocked(g *grant) {
	if g.State == Pending && m.clock.Mono()-g.createdMono >= Window {
		m.setGrantLocked(g, Expired)
	}
}

// RequestGrant asks the person for a capture grant in a run. Only the run's
// own agent may ask, and only MaxGrantsPerRun times.
func (m *Manager) RequestGrant(runID, agentID string, req GrantRequest) (Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.liveRunLocked(runID, agentID)
	if err != nil {
		return Grant{}, err
	}
	if len(r.grants) >= MaxGrantsPerRun {
		return Grant{}, refuse("too_many_grants", "run %s already asked for %d capture grants", runID, MaxGrantsPerRun)
	}
	wall := m.clock.Wall()
	g := &grant{
		Grant:       Grant{ID: newID(), RunID: runID, AgentID: agentID, Request: req, State: Pending, CreatedAt: wall, ExpiresAt: wall.Add(Window)},
		createdMono: m.clock.Mono(), done: make(chan struct{}),
	}
	g.Request.EnvNames = slices.Clone(req.EnvNames)
	g.Request.FilesystemRoots = slices.Clone(req.FilesystemRoots)
	r.grants = append(r.grants, g)
	m.grants[g.ID] = g
	c := g.copy()
	m.broadcast(Event{Kind: KindGrant, Type: "raised", Grant: &c})
	return c, nil
}

// GetGrant returns a grant's current state.
func (m *Manager) GetGrant(id string) (Grant, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.grants[id]
	if !ok {
		return Grant{}, false
	}
	m.expireGrantLocked(g)
	return g.copy(), true
}

// PendingGrants lists the grants waiting for a decision, oldest first.
func (m *Manager) PendingGrants() []Grant {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Grant
	for _, g := range m.grants {
		m.expireGrantLocked(g)
		if g.State == Pending {
			out = append(out, g.copy())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// DecideGrant records the person's decision on a pending grant, once.
// Approving needs a scope (once or session); denying ignores it.
func (m *Manager) DecideGrant(id string, approve bool, scope GrantScope) (Grant, error) {
	if approve && scope != ScopeOnce && scope != ScopeSession {
		return Grant{}, refuse("invalid_scope", "a grant is approved for %q or %q, not %q", ScopeOnce, ScopeSession, scope)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.grants[id]
	if !ok {
		return Grant{}, refuse("unknown_grant", "no grant %s", id)
	}
	m.expireGrantLocked(g)
	if g.State != Pending {
		code := "already_decided"
		if g.State == Expired || g.State == Cancelled {
			code = string(g.State)
		}
		return g.copy(), refuse(code, "the grant is %s; only a pending grant can be decided", g.State)
	}
	if !approve {
		m.setGrantLocked(g, Denied)
		return g.copy(), nil
	}
	g.Scope = scope
	m.setGrantLocked(g, Approved)
	return g.copy(), nil
}

// WithdrawGrant cancels a grant that is still pending, for a capture that
// stopped waiting. A decided grant is unchanged.
func (m *Manager) WithdrawGrant(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g, ok := m.grants[id]; ok && g.State == Pending {
		m.setGrantLocked(g, Cancelled)
	}
}

// WaitGrant blocks until the grant leaves Pending or ctx ends.
func (m *Manager) WaitGrant(ctx context.Context, id string) (Grant, error) {
	m.mu.Lock()
	g, ok := m.grants[id]
	if !ok {
		m.mu.Unlock()
		return Grant{}, refuse("unknown_grant", "no grant %s", id)
	}
	done := g.done
	m.mu.Unlock()
	if err := waitUntil(ctx, done, func() bool { got, _ := m.GetGrant(id); return got.State != Pending }); err != nil {
		return Grant{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return g.copy(), nil
}

// UseGrant spends the authority for one capture of req in the run: the
// first approved grant of that run (and no other) that covers req. A once
// grant becomes consumed; a session grant counts the use and stays live.
// Under concurrency a once grant is spent by exactly one caller.
func (m *Manager) UseGrant(runID, agentID string, req GrantRequest) (Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, err := m.liveRunLocked(runID, agentID)
	if err != nil {
		return Grant{}, err
	}
	for _, g := range r.grants {
		m.expireGrantLocked(g)
		if g.State != Approved || !g.Request.Covers(req) {
			continue
		}
		g.Uses++
		if g.Scope == ScopeOnce {
			m.setGrantLocked(g, Consumed)
		}
		return g.copy(), nil
	}
	return Grant{}, refuse("grant_required", "no approved capture grant of this connection covers this capture")
}

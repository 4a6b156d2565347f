package consent

import (
	"context"
	"path/filepath"
	"slices"
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

// grantData is what a grant holds besides the lifecycle.
type grantData struct {
	agentID string
	req     GrantRequest
	scope   GrantScope
	uses    int
}

// grantView is a grant's public state, sharing no slice with it.
func grantView(g *request[grantData]) Grant {
	c := Grant{ID: g.id, RunID: g.runID, AgentID: g.data.agentID, Request: g.data.req, State: g.state, Scope: g.data.scope,
		Uses: g.data.uses, CreatedAt: g.createdAt, ExpiresAt: g.createdAt.Add(Window)}
	c.Request.EnvNames = slices.Clone(g.data.req.EnvNames)
	c.Request.FilesystemRoots = slices.Clone(g.data.req.FilesystemRoots)
	return c
}

// RequestGrant asks the person for a capture grant in a run. Only the run's
// own agent may ask, and only MaxGrantsPerRun times. Grants are never
// replaced: each covers its own request.
func (m *Manager) RequestGrant(runID, agentID string, req GrantRequest) (Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.liveRunLocked(runID, agentID); err != nil {
		return Grant{}, err
	}
	if len(m.grants.byRun[runID]) >= MaxGrantsPerRun {
		return Grant{}, refuse("too_many_grants", "run %s already asked for %d capture grants", runID, MaxGrantsPerRun)
	}
	req.EnvNames = slices.Clone(req.EnvNames)
	req.FilesystemRoots = slices.Clone(req.FilesystemRoots)
	return grantView(m.grants.raise(runID, grantData{agentID: agentID, req: req})), nil
}

// GetGrant returns a grant's current state.
func (m *Manager) GetGrant(id string) (Grant, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.grants.get(id)
}

// PendingGrants lists the grants waiting for a decision, oldest first.
func (m *Manager) PendingGrants() []Grant {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.grants.pending()
}

// DecideGrant records the person's decision on a pending grant, once.
// Approving needs a scope (once or session; invalid_scope otherwise);
// denying ignores it. Deciding any other grant changes nothing and fails
// with the decision rule's code, as Decide does.
func (m *Manager) DecideGrant(id string, approve bool, scope GrantScope) (Grant, error) {
	if approve && scope != ScopeOnce && scope != ScopeSession {
		return Grant{}, refuse("invalid_scope", "a grant is approved for %q or %q, not %q", ScopeOnce, ScopeSession, scope)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.grants.decide(id, approve, func(g *request[grantData]) { g.data.scope = scope })
}

// WithdrawGrant cancels a grant that is still pending, for a capture that
// stopped waiting. A decided grant is unchanged.
func (m *Manager) WithdrawGrant(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.grants.withdraw(id, Cancelled, false)
}

// WaitGrant blocks until the grant leaves Pending or ctx ends.
func (m *Manager) WaitGrant(ctx context.Context, id string) (Grant, error) {
	return m.grants.wait(ctx, id)
}

// UseGrant spends the authority for one capture of req in the run: the
// first approved grant of that run (and no other) that covers req. A once
// grant becomes consumed; a session grant counts the use and stays live.
// Under concurrency a once grant is spent by exactly one caller.
func (m *Manager) UseGrant(runID, agentID string, req GrantRequest) (Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.liveRunLocked(runID, agentID); err != nil {
		return Grant{}, err
	}
	for _, g := range m.grants.ofRun(runID) {
		if g.state != Approved || !g.data.req.Covers(req) {
			continue
		}
		g.data.uses++
		if g.data.scope == ScopeOnce {
			m.grants.set(g, Consumed)
		}
		return grantView(g), nil
	}
	return Grant{}, refuse("grant_required", "no approved capture grant of this connection covers this capture")
}

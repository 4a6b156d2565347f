package app

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/store"
)

// Evidence resources over MCP (docs/mcp.md, "Evidence resources"): a connection sees the captures
// it made and the saved Evidence the person shared with agents
// (Facade.ShareEvidence), nothing else. Every connection has its own
// mcp.Server (serverFor), so its resources are registered on that server
// and the SDK tells the client whenever its list changes
// (notifications/resources/list_changed). Reads and comparisons check
// visibility again against the index (mcpTools.visible), so a list that
// lags behind a change never widens access.

// evidenceConns are the live connections whose resource lists follow the
// person's sharing.
type evidenceConns struct {
	db    *store.DB
	mu    sync.Mutex
	conns map[*mcpTools]time.Time // → when attached
}

// attach starts following sharing for t and registers the Evidence
// shared so far; the session's release detaches it (mcp_sessions.go).
func (c *evidenceConns) attach(ctx context.Context, t *mcpTools) {
	c.mu.Lock()
	c.conns[t] = time.Now()
	c.mu.Unlock()
	shared, err := c.db.ListSharedEvidence(ctx, maxListedEvidence)
	if err != nil {
		return // reads still check the index; only the list starts empty
	}
	for _, e := range shared {
		t.addShared(e)
	}
}

// detach stops following sharing for t (its session ended).
func (c *evidenceConns) detach(t *mcpTools) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.conns, t)
}

// shared updates every live connection's list after the person shared
// the Evidence id, or stopped sharing it.
func (c *evidenceConns) shared(ctx context.Context, id string, shared bool) {
	e, err := c.db.GetEvidence(ctx, id)
	if err != nil {
		e, shared = store.EvidenceEntry{EvidenceID: id}, false // deleted meanwhile
	}
	c.mu.Lock()
	conns := make([]*mcpTools, 0, len(c.conns))
	for t := range c.conns {
		conns = append(conns, t)
	}
	c.mu.Unlock()
	for _, t := range conns {
		if shared && e.Shared {
			t.addShared(e)
		} else {
			t.removeShared(id)
		}
	}
}

// follow applies the facade's "evidence" events to the live connections
// until the facade closes its event hub.
func (c *evidenceConns) follow(ctx context.Context, events <-chan UIEvent) {
	for ev := range events {
		if ev.Name != "evidence" {
			continue
		}
		if d, ok := ev.Data.(evidenceEvent); ok {
			c.shared(ctx, d.EvidenceID, d.Shared)
		}
	}
}

// addLocal records a capture made on this connection and lists it.
func (t *mcpTools) addLocal(id string) {
	t.mu.Lock()
	t.local[id] = true
	t.mu.Unlock()
	name, title := "capture "+id, "Capture made on this connection"
	if e, err := t.s.f.env.DB.GetEvidence(t.s.f.ctx, id); err == nil {
		name = "capture: " + sharedName(e)
		title = "Capture of " + sharedName(e) + " (made on this connection)"
	}
	t.srv.AddResource(&mcp.Resource{URI: evidenceURIPrefix + id, Name: name, Title: title, MIMEType: "application/json",
		Description: "Process Capture v4 Evidence " + id}, t.readEvidence)
}

// addShared lists shared Evidence (a capture of this connection keeps its
// own entry).
func (t *mcpTools) addShared(e store.EvidenceEntry) {
	t.mu.Lock()
	local := t.local[e.EvidenceID]
	t.mu.Unlock()
	if !local {
		t.srv.AddResource(&mcp.Resource{URI: evidenceURIPrefix + e.EvidenceID, Name: "shared: " + sharedName(e), Title: sharedName(e) + " (shared by the person)",
			Description: "Evidence " + e.EvidenceID + " the person shares with agents", MIMEType: "application/json"}, t.readEvidence)
	}
}

// removeShared unlists Evidence no longer shared, unless this connection
// made it.
func (t *mcpTools) removeShared(id string) {
	t.mu.Lock()
	local := t.local[id]
	t.mu.Unlock()
	if !local {
		t.srv.RemoveResources(evidenceURIPrefix + id)
	}
}

// visible reports whether the Evidence id may reach this connection: a
// capture it made, or saved Evidence the person shares with agents now.
// Any other id is answered as if it did not exist.
func (t *mcpTools) visible(ctx context.Context, id string) bool {
	t.mu.Lock()
	local := t.local[id]
	t.mu.Unlock()
	if local {
		return true
	}
	e, err := t.s.f.env.DB.GetEvidence(ctx, id)
	return err == nil && e.Shared
}

// sharedName is a short label of a shared entry: its command or file name.
func sharedName(e store.EvidenceEntry) string {
	var s struct {
		Command  string `json:"command"`
		FileName string `json:"file_name"`
	}
	_ = json.Unmarshal(e.Summary, &s)
	switch {
	case s.FileName != "":
		return s.FileName
	case s.Command != "":
		return strictTruncate(s.Command, 80)
	}
	return e.Operation
}

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/store"
)

// connEvidence remembers which captures each MCP session made: evidence
// resources are connection-local unless the person shares them.
type connEvidence struct {
	mu  sync.Mutex
	ids map[*mcp.ServerSession]map[string]bool
}

func (c *connEvidence) add(ss *mcp.ServerSession, id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[*mcp.ServerSession]map[string]bool{}
	}
	if c.ids[ss] == nil {
		c.ids[ss] = map[string]bool{}
		go func() { ss.Wait(); c.mu.Lock(); delete(c.ids, ss); c.mu.Unlock() }()
	}
	c.ids[ss][id] = true
}

// list returns the ids of the captures made on ss, in no order.
func (c *connEvidence) list(ss *mcp.ServerSession) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ids := make([]string, 0, len(c.ids[ss]))
	for id := range c.ids[ss] {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (c *connEvidence) has(ss *mcp.ServerSession, id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ids[ss][id]
}

const evidenceURIPrefix = "gatehouse://evidence/"

// addCaptureTools registers capture_process_scenario and the
// gatehouse://evidence/{id} resources: the captures made on the
// connection and the saved Evidence the person shared with agents
// (Facade.ShareEvidence), listed by resources/list.
func (s *mcpService) addCaptureTools(srv *mcp.Server, t *mcpTools) {
	srv.AddTool(&mcp.Tool{Name: "capture_process_scenario", Description: "Run one command in a PTY under the person's process-capture operator policy and record Process Capture v4 Evidence. " +
		"The policy must allow the executable, working directory, environment and filesystem roots; the result names the Evidence resource.",
		InputSchema: map[string]any{"type": "object", "description": "a Process Capture v4 scenario (see the Gatehouse docs)"}}, t.captureScenario)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: evidenceURIPrefix + "{id}", Name: "evidence", MIMEType: "application/json",
		Description: "Evidence of a capture made on this connection, or shared with agents by the person"}, t.readEvidence)
	srv.AddReceivingMiddleware(t.listEvidence)
}

func (t *mcpTools) captureScenario(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	f := t.s.f
	sc, issues := capture.ParseScenario(req.Params.Arguments)
	if len(issues) > 0 {
		return jsonResult(map[string]any{"error": true, "code": "invalid_scenario", "issues": issues}, true), nil
	}
	pol, err := loadCapturePolicy(ctx, f.env)
	if err != nil {
		return toolError(codeOf(err), messageOf(err)), nil
	}
	if reason, msg := pol.CheckCapture(sc.PolicyRequest()); reason != "" {
		return toolError(reason, msg), nil
	}
	if !pol.AutoGrant {
		// Without auto-grant the boundary is only a ceiling: the capture
		// needs a grant of this connection, approved by the person in the
		// app for once or for the session.
		if code, msg := t.captureGrant(ctx, req.Session, sc); code != "" {
			return toolError(code, msg), nil
		}
	}
	rec, ev, _, _, err := captureAndSave(ctx, f.env, f.sup, sc, pol)
	if err != nil {
		return toolError(codeOf(err), messageOf(err)), nil
	}
	t.s.evidence.add(req.Session, ev.EvidenceID)
	return jsonResult(map[string]any{
		"evidence_id": ev.EvidenceID, "resource": evidenceURIPrefix + ev.EvidenceID,
		"exit": rec.Exit, "settlement": rec.Settlement.State, "truncated": rec.Truncated,
		"frames": len(rec.Frames), "limitations": rec.Limitations,
	}, false), nil
}

func (t *mcpTools) readEvidence(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id := strings.TrimPrefix(uri, evidenceURIPrefix)
	if !evidenceIDPattern.MatchString(id) || !t.visible(ctx, req.Session, id) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, err := os.ReadFile(evidenceFile(t.s.f.env.DataDir, id))
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(data)}}}, nil
}

// captureGrant spends a live grant of this connection that covers the
// scenario, or asks the person for one in the app and waits. It returns a
// refusal code and message, or "" when the capture may run.
func (t *mcpTools) captureGrant(ctx context.Context, ss *mcp.ServerSession, sc *capture.Scenario) (code, msg string) {
	f := t.s.f
	runID := t.s.runFor(ss, t.agentID)
	pr := sc.PolicyRequest()
	want := consent.GrantRequest{Executable: pr.Executable, WorkingDir: pr.WorkingDir, EnvNames: pr.EnvNames,
		FilesystemRoots: pr.FilesystemRoots, ExternalNetwork: pr.ExternalNetwork}
	if _, err := f.consent.UseGrant(runID, t.agentID, want); err == nil {
		return "", ""
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer t.s.track(ss.ID(), cancel)()
	go watchSession(ctx, ss, cancel)
	g, err := f.askGrant(ctx, runID, t.agentID, want, append([]string{sc.Executable}, sc.Arguments...))
	if err != nil {
		if c := consent.Code(err); c != "" {
			return c, err.Error()
		}
		return "cancelled", "the capture stopped waiting for a grant: " + err.Error()
	}
	if g.State != consent.Approved {
		return string(g.State), fmt.Sprintf("the capture grant was %s", g.State)
	}
	if _, err := f.consent.UseGrant(runID, t.agentID, want); err != nil {
		return consent.Code(err), err.Error()
	}
	return "", ""
}

// visible reports whether the Evidence id may reach the connection: a
// capture it made, or saved Evidence the person shared with agents. Any
// other id is answered as if it did not exist.
func (t *mcpTools) visible(ctx context.Context, ss *mcp.ServerSession, id string) bool {
	if t.s.evidence.has(ss, id) {
		return true
	}
	e, err := t.s.f.env.DB.GetEvidence(ctx, id)
	return err == nil && e.Shared
}

// listEvidence answers resources/list with the connection's captures and
// the shared saved Evidence (newest first, at most maxListedEvidence),
// read from the index on every call, so sharing and unsharing in the app
// hold for the next list. The server itself has no fixed resources.
func (t *mcpTools) listEvidence(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListResourcesResult)
		if method != "resources/list" || err != nil || !ok || list.NextCursor != "" {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		seen := map[string]bool{}
		add := func(id, name string) {
			if !seen[id] && len(list.Resources) < maxListedEvidence {
				seen[id] = true
				list.Resources = append(list.Resources, &mcp.Resource{URI: evidenceURIPrefix + id, Name: name, MIMEType: "application/json"})
			}
		}
		for _, id := range t.s.evidence.list(ss) {
			add(id, "capture made on this connection")
		}
		shared, err := t.s.f.env.DB.ListSharedEvidence(ctx, maxListedEvidence)
		if err != nil {
			return nil, fmt.Errorf("list shared evidence: %w", err)
		}
		for _, e := range shared {
			add(e.EvidenceID, "shared by the person: "+sharedName(e))
		}
		return list, nil
	}
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

package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/evidence"
)

const evidenceURIPrefix = "gatehouse://evidence/"

// addCaptureTools registers capture_process_scenario and the
// gatehouse://evidence/{id} template; the resources themselves are
// registered per connection (mcp_resources.go).
func (s *mcpService) addCaptureTools(srv *mcp.Server, t *mcpTools) {
	srv.AddTool(&mcp.Tool{Name: "capture_process_scenario", Description: "Run one command in a PTY under the person's process-capture operator policy and record Process Capture v4 Evidence. " +
		"The policy must allow the executable, working directory, environment and filesystem roots; the result names the Evidence resource.",
		InputSchema: map[string]any{"type": "object", "description": "a Process Capture v4 scenario (see the Gatehouse docs)"}}, t.captureScenario)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: evidenceURIPrefix + "{id}", Name: "evidence", MIMEType: "application/json",
		Description: "Evidence of a capture made on this connection, or shared with agents by the person"}, t.readEvidence)
}

func (t *mcpTools) captureScenario(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	f := t.s.f
	sc, issues := capture.ParseScenario(req.Params.Arguments)
	if len(issues) > 0 {
		return jsonResult(map[string]any{"error": true, "code": "invalid_scenario", "issues": issues}, true), nil
	}
	// A capture runs a program: safe mode and the agent's capability
	// apply as to a skill run, checked first and again before launch.
	runID := t.s.runFor(req.Session, t.agentID)
	if err := f.pipeline.AdmitCapture(ctx, t.agentID, runID, sc.Executable); err != nil {
		return toolError(consent.Code(err), err.Error()), nil
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
	if err := f.pipeline.AdmitCapture(ctx, t.agentID, runID, sc.Executable); err != nil {
		return toolError(consent.Code(err), err.Error()), nil
	}
	rec, ev, _, _, err := captureAndSave(ctx, f.env, f.sup, &f.renderers, sc, pol)
	if err != nil {
		return toolError(codeOf(err), messageOf(err)), nil
	}
	t.addLocal(ev.EvidenceID)
	return jsonResult(map[string]any{
		"evidence_id": ev.EvidenceID, "resource": evidenceURIPrefix + ev.EvidenceID,
		"exit": rec.Exit, "settlement": rec.Settlement.State, "truncated": rec.Truncated,
		"frames": len(rec.Frames), "limitations": rec.Limitations,
	}, false), nil
}

func (t *mcpTools) readEvidence(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id := strings.TrimPrefix(uri, evidenceURIPrefix)
	if !evidence.ValidID(id) || !t.visible(ctx, id) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	// Like the app, an agent never gets a file that no longer verifies.
	got, err := t.s.f.GetEvidence(GetEvidenceArgs{ID: id})
	switch {
	case codeOf(err) == "evidence_not_found":
		return nil, mcp.ResourceNotFoundError(uri)
	case err != nil:
		return nil, fmt.Errorf("%s: %s", codeOf(err), messageOf(err))
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(got.Evidence)}}}, nil
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
	g, err := t.askGrant(ctx, ss, runID, want, append([]string{sc.Executable}, sc.Arguments...)) // mcp_elicit.go
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

package app

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/compare"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/replay"
)

// addEvidenceTools registers the tools that work on data only: replay
// machines (no process, no socket) and comparisons of saved captures.
func (s *mcpService) addEvidenceTools(srv *mcp.Server, t *mcpTools) {
	srv.AddTool(&mcp.Tool{Name: "run_replay_machine", Description: "Run a replay machine against an ordered list of events. No process is started and no socket is opened.",
		InputSchema: objectSchema(map[string]any{
			"machine": map[string]any{"type": "object", "description": "the replay machine"},
			"events":  map[string]any{"type": "array", "description": "ordered events", "items": map[string]any{"type": "object"}},
		}, []string{"machine", "events"})}, t.runReplayMachine)
	srv.AddTool(&mcp.Tool{Name: "compare_process_captures", Description: "Compare two saved process captures (by evidence id) per dimension, with the first divergence; optionally check a trace spec.",
		InputSchema: objectSchema(map[string]any{
			"left_evidence_id":   stringSchema("ev_… id of a capture made on this connection or shared with agents"),
			"right_evidence_id":  stringSchema("ev_… id of a capture made on this connection or shared with agents"),
			"trace_spec":         map[string]any{"type": "object", "description": "optional trace spec (version 1)"},
			"max_capture_age_ms": map[string]any{"type": "integer", "minimum": 1},
			"mode": map[string]any{"type": "string", "enum": []string{"behavior", "exact"}, "default": "behavior",
				"description": "behavior: did the program behave differently (chunking, times, sample counts ignored); exact: the same observations item by item, times included"},
		}, []string{"left_evidence_id", "right_evidence_id"})}, t.compareCaptures)
}

func (t *mcpTools) runReplayMachine(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw := req.Params.Arguments
	if len(raw) > replay.MaxInputBytes {
		return toolError("input_too_large", "the run is too large"), nil
	}
	run, issues := replay.ParseRun(raw)
	if len(issues) > 0 {
		return jsonResult(map[string]any{"error": true, "code": "invalid_request", "issues": issues}, true), nil
	}
	res, err := replay.Execute(run)
	if err != nil {
		return toolError("internal", err.Error()), nil
	}
	return jsonResult(res, false), nil
}

// loadEvidence reads a capture saved under the data directory's evidence/
// folder and re-verifies it, when it is visible to the connection (made
// on it, or shared by the person); any other id is "not found".
func (t *mcpTools) loadEvidence(ctx context.Context, id string) (*evidence.Envelope, *mcp.CallToolResult) {
	if !evidence.ValidID(id) {
		return nil, toolError("invalid_arguments", "evidence ids look like ev_ followed by 64 hex digits")
	}
	if !t.visible(ctx, id) {
		return nil, toolError("evidence_not_found", "no capture "+id+" made on this connection or shared with agents")
	}
	// GetEvidence reads the file bounded and re-verifies it (envelope and
	// record), skipping files whose exact bytes verified before.
	got, err := t.s.f.GetEvidence(GetEvidenceArgs{ID: id})
	if err != nil {
		var ce *CLIError
		if errors.As(err, &ce) && ce.Details != nil {
			return nil, jsonResult(map[string]any{"error": true, "code": ce.Code, "message": ce.Message, "issues": ce.Details}, true)
		}
		return nil, toolError(codeOf(err), messageOf(err))
	}
	env, err := verifiedEnvelope(got.Evidence)
	if err != nil {
		return nil, toolError(codeOf(err), messageOf(err))
	}
	return env, nil
}

func (t *mcpTools) compareCaptures(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Left   string          `json:"left_evidence_id"`
		Right  string          `json:"right_evidence_id"`
		Trace  json.RawMessage `json:"trace_spec"`
		MaxAge int64           `json:"max_capture_age_ms"`
		Mode   string          `json:"mode"`
	}
	if err := decodeArgs(req.Params.Arguments, &a); err != nil {
		return toolError("invalid_arguments", err.Error()), nil
	}
	left, bad := t.loadEvidence(ctx, a.Left)
	if bad != nil {
		return bad, nil
	}
	right, bad := t.loadEvidence(ctx, a.Right)
	if bad != nil {
		return bad, nil
	}
	mode, ok := compare.ParseMode(a.Mode)
	if !ok {
		return toolError("invalid_arguments", `mode must be "behavior" (the default) or "exact"`), nil
	}
	opts := compare.Options{MaxCaptureAgeMS: a.MaxAge, Mode: mode}
	if len(a.Trace) > 0 && string(a.Trace) != "null" {
		spec, err := compare.ParseTraceSpec(a.Trace)
		if err != nil {
			return jsonResult(map[string]any{"error": true, "code": "invalid_trace_spec", "message": err.Error(), "details": err}, true), nil
		}
		opts.Trace = spec
	}
	res, err := compare.Compare(left, right, opts)
	if err != nil {
		return toolError("comparison_refused", err.Error()), nil
	}
	env, err := compare.Envelope(res, left, right)
	if err != nil {
		return toolError("internal", err.Error()), nil
	}
	return jsonResult(map[string]any{"evidence_id": env.EvidenceID, "result": res}, false), nil
}

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

// loadCapture reads a capture saved under the data directory's evidence/
// folder for a comparison (Facade.cmpLoadCapture: verified on read, with
// the proof of its record), when it is visible to the connection (made
// on it, or shared by the person); any other id is "not found".
func (t *mcpTools) loadCapture(ctx context.Context, id, side string) (*evidence.Envelope, compare.Capture, *mcp.CallToolResult) {
	if !evidence.ValidID(id) {
		return nil, compare.Capture{}, toolError("invalid_arguments", "evidence ids look like ev_ followed by 64 hex digits")
	}
	if !t.visible(ctx, id) {
		return nil, compare.Capture{}, toolError("evidence_not_found", "no capture "+id+" made on this connection or shared with agents")
	}
	env, c, err := t.s.f.cmpLoadCapture(id, side)
	if err != nil {
		var ce *CLIError
		if errors.As(err, &ce) && ce.Details != nil {
			return nil, compare.Capture{}, jsonResult(map[string]any{"error": true, "code": ce.Code, "message": ce.Message, "issues": ce.Details}, true)
		}
		return nil, compare.Capture{}, toolError(codeOf(err), messageOf(err))
	}
	return env, c, nil
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
	left, lc, bad := t.loadCapture(ctx, a.Left, "left")
	if bad != nil {
		return bad, nil
	}
	right, rc, bad := t.loadCapture(ctx, a.Right, "right")
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
	res, err := compare.CompareCaptures(lc, rc, opts)
	if err != nil {
		return toolError("comparison_refused", err.Error()), nil
	}
	env, err := compare.Envelope(res, left, right)
	if err != nil {
		return toolError("internal", err.Error()), nil
	}
	return jsonResult(map[string]any{"evidence_id": env.EvidenceID, "result": res}, false), nil
}

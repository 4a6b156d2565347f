package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/bundle"
)

// One error shape (docs/mcp.md "Results and errors"): every tool failure is
// {code, message, retryable, next_step, issues: [{path, code, message}]}
// in structuredContent with isError, plus whatever the failure carries
// besides (a run's envelope keeps its fields). Tools build failures with
// toolError or toolIssues, or hand a failed result to jsonResult, which
// completes it into this shape; nothing else sets isError.

// mcpIssue is one problem at a JSON path of the arguments: the issue every
// Gatehouse parser reports (bundle.Issue is that type).
type mcpIssue = bundle.Issue

// advice is what an agent can do about a failure code.
type advice struct {
	retryable bool
	next      string
}

const fixArgs = "fix the arguments at the paths in issues and call again"

var adviceByCode = map[string]advice{
	"invalid_arguments":       {false, fixArgs},
	"invalid_scenario":        {false, fixArgs},
	"invalid_request":         {false, fixArgs},
	"invalid_plan":            {false, fixArgs},
	"invalid_trace_spec":      {false, fixArgs},
	"invalid_workspace":       {false, "pass the absolute path of an existing directory as workspace"},
	"input_invalid":           {false, "make input match the skill's inputSchema (read_skill shows it) and call again"},
	"input_too_large":         {false, "send a smaller request"},
	"skill_not_found":         {false, "call list_skills to see the skills Gatehouse knows"},
	"not_found":               {false, "call list_skills to see the skills Gatehouse knows"},
	"resource_refused":        {false, "use a path from read_skill's resource list"},
	"evidence_not_found":      {false, "use an evidence id returned on this connection or listed as a resource"},
	"permission_required":     {true, "the person must approve in the Gatehouse app; ask them to open it, then call again"},
	"denied":                  {false, "the person declined this request; do not repeat it unless they ask you to"},
	"expired":                 {true, "the person did not decide in time; call again if they still want it"},
	"cancelled":               {true, "the request was cancelled; call again to make a new one"},
	"superseded":              {false, "a newer call for the same skill replaced this one; wait for that call's result"},
	"blocked":                 {false, "the person's policy blocks every run; only they can change it, in Gatehouse"},
	"safe_mode":               {false, "safe mode is on in Gatehouse; only the person can turn it off"},
	"capability_missing":      {false, "this agent may not do this; only the person can allow it, in Gatehouse"},
	"agent_disabled":          {false, "this agent is disabled in Gatehouse; only the person can enable it"},
	"too_many_runs":           {true, "read the waiting runs with await_run, then call again"},
	"too_many_proposals":      {false, "this connection made too many requests; open a new session"},
	"too_many_plans":          {false, "this connection proposed too many workflow plans; open a new session"},
	"unknown_ticket":          {false, "use the ticket of an awaiting_decision result of this connection; a result is handed out once"},
	"timeout":                 {false, "the script ran out of time; see issues"},
	"output_limit":            {false, "the script's output was too large; see issues"},
	"binding_changed":         {true, "what would run changed after approval; call again to ask for the new version"},
	"runtime_changed":         {false, "the pinned Node runtime changed; the person must re-pin it in Gatehouse"},
	"policy_unreadable":       {false, "Gatehouse cannot read its policy; the person must repair it"},
	"capture_disabled":        {false, "process capture is not enabled by the person's operator policy"},
	"not_workflow_mode":       {false, "propose_workflow needs the person's policy in workflow mode; use run_skill instead"},
	"off_plan":                {false, "run exactly an approved step of the plan, or propose a new plan"},
	"comparison_refused":      {false, "compare two captures of the same scenario; see message"},
	"confinement_unavailable": {false, "this machine cannot confine the script as the person's settings require"},
}

// adviceFor is the advice for code; an unknown code is not retryable.
func adviceFor(code string) advice {
	if a, ok := adviceByCode[code]; ok {
		return a
	}
	return advice{false, "see message; calling again with the same arguments will fail the same way"}
}

// failure is the structured content of a failed call.
func failure(code, msg string, issues []mcpIssue, extra map[string]any) map[string]any {
	if issues == nil {
		issues = []mcpIssue{}
	}
	a := adviceFor(code)
	out := map[string]any{}
	for k, v := range extra {
		out[k] = v
	}
	delete(out, "error")
	delete(out, "details")
	out["code"], out["message"], out["retryable"], out["next_step"], out["issues"] = code, msg, a.retryable, a.next, issues
	return out
}

func failed(content map[string]any) *mcp.CallToolResult {
	body, _ := json.Marshal(content)
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: content}
}

// toolError is a structured tool failure with no argument path.
func toolError(code, msg string) *mcp.CallToolResult {
	return failed(failure(code, msg, nil, nil))
}

// toolIssues is a failure with the problems at their paths.
func toolIssues(code, msg string, issues ...mcpIssue) *mcp.CallToolResult {
	return failed(failure(code, msg, issues, nil))
}

// argsError turns a strict decoding error of a tool's arguments into a
// failure with the path of the problem.
func argsError(err error) *mcp.CallToolResult {
	path, msg := "$", err.Error()
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		if te.Field != "" { // the dotted Go field path of fixed argument names
			for _, name := range strings.Split(te.Field, ".") {
				path = bundle.JoinPath(path, name)
			}
		}
		msg = fmt.Sprintf("must be %s, not %s", jsonKind(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se):
		msg = "the arguments are not valid JSON"
	case strings.HasPrefix(msg, "json: unknown field "):
		// The agent's own name, Go-quoted by encoding/json: unquoted and
		// written in the one path syntax, so its characters stay escaped.
		quoted := strings.TrimPrefix(msg, "json: unknown field ")
		name, uerr := strconv.Unquote(quoted)
		if uerr != nil {
			name = quoted
		}
		path, msg = bundle.JoinPath("$", name), "unknown argument"
	}
	return toolIssues("invalid_arguments", "the arguments are invalid", mcpIssue{Path: path, Code: "invalid_arguments", Message: msg})
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "int", "int64", "float64":
		return "a number"
	case "bool":
		return "a boolean"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return k
}

// completeFailure gives a failed result's content the one error shape:
// its code and message from its own fields or its first issue (a run
// envelope's errors), its issues normalised.
func completeFailure(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		m = map[string]any{}
	}
	var issues []mcpIssue
	for _, key := range []string{"issues", "errors", "details"} {
		list, ok := m[key].([]any)
		if !ok {
			continue
		}
		for _, it := range list {
			o, _ := it.(map[string]any)
			is := mcpIssue{Path: str(o["path"]), Code: str(o["code"]), Message: str(o["message"])}
			if is.Path == "" {
				is.Path = "$"
			}
			issues = append(issues, is)
		}
		break
	}
	code, msg := str(m["code"]), str(m["message"])
	if code == "" && len(issues) > 0 {
		code = issues[0].Code
	}
	for _, k := range []string{"state", "status"} {
		if code == "" {
			code = str(m[k])
		}
	}
	if code == "" {
		code = "failed"
	}
	if msg == "" && len(issues) > 0 {
		msg = issues[0].Message
	}
	if msg == "" {
		msg = "the call failed (" + code + ")"
	}
	return failure(code, msg, issues, m)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/docs"
)

// Tool metadata (docs/mcp.md "Tool metadata"): every tool has a title,
// truthful annotations and an output schema matching its
// structuredContent, success and failure alike (the TypeScript SDK client
// validates both against it).
//
// Tools are registered in several files (one per idea), some of them
// shared with other work; the metadata lives in this one table instead,
// and a middleware of each session's server puts it into every tools/list
// answer, so no tool can be listed without it (TestMCPToolMetadata).

type toolMeta struct {
	title  string
	notes  mcp.ToolAnnotations
	output map[string]any // the success shape; failures are errorSchema
}

func hint(b bool) *bool { return &b }

// readOnly annotates a tool that changes nothing outside Gatehouse's
// answer to the caller.
func readOnly(title string) mcp.ToolAnnotations {
	return mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: hint(false), OpenWorldHint: hint(false)}
}

var toolMetas = map[string]toolMeta{
	"list_skills": {title: "List skills", notes: readOnly("List skills"), output: objectOut(map[string]any{
		"skills": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []string{"name", "valid", "runnable"}, "properties": map[string]any{
			"name":        stringSchema("skill name"),
			"description": stringSchema("the skill's description (at most 1,024 characters here; read_skill has it whole)"),
			"valid":       map[string]any{"type": "boolean", "description": "the SKILL.md and execution.json pass inspection"},
			"runnable":    map[string]any{"type": "boolean", "description": "run_skill can run its script"},
			"reason":      stringSchema("why it cannot run (prompt_only, invalid, …)"),
			"issue":       issueSchema,
		}}},
	}, "skills")},
	"read_skill": {title: "Read a skill", notes: readOnly("Read a skill"), output: objectOut(map[string]any{
		"name":      stringSchema("skill name"),
		"body":      stringSchema("the SKILL.md instructions"),
		"execution": map[string]any{"type": "object", "description": "the script's inspection: availability, revision, issues"},
	}, "name")},
	"read_skill_resource": {title: "Read a skill file", notes: readOnly("Read a skill file"), output: objectOut(map[string]any{
		"name":      stringSchema("skill name"),
		"path":      stringSchema("the file, relative to the skill folder"),
		"mime_type": stringSchema("the file's media type"),
		"size":      map[string]any{"type": "integer", "minimum": 0},
		"encoding":  map[string]any{"enum": []string{"text", "base64"}, "description": "text: the content block is the UTF-8 text; base64: it is a blob"},
	}, "name", "path", "mime_type", "size", "encoding")},
	"run_skill": {title: "Run a skill's script (asks the person)", notes: mcp.ToolAnnotations{Title: "Run a skill's script (asks the person)",
		DestructiveHint: hint(true), OpenWorldHint: hint(true)}, output: runOutput},
	"await_run": {title: "Keep waiting for a run_skill request", notes: readOnly("Keep waiting for a run_skill request"), output: runOutput},
	"propose_workflow": {title: "Propose a workflow plan (asks the person)", notes: mcp.ToolAnnotations{Title: "Propose a workflow plan (asks the person)",
		DestructiveHint: hint(false), OpenWorldHint: hint(false)}, output: objectOut(map[string]any{
		"planId": stringSchema("the plan's id"),
		"state":  stringSchema("approved, denied, expired, …"),
		"steps":  map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
	}, "planId", "state")},
	"capture_process_scenario": {title: "Capture a command's process behaviour", notes: mcp.ToolAnnotations{Title: "Capture a command's process behaviour",
		DestructiveHint: hint(true), OpenWorldHint: hint(true)}, output: objectOut(map[string]any{
		"evidence_id": stringSchema("ev_… id of the saved Evidence"),
		"resource":    stringSchema("gatehouse://evidence/{id}"),
		"exit":        map[string]any{"type": "object", "description": "how the command ended (code or signal)"},
		"settlement":  stringSchema("the process tree's settlement"),
		"truncated":   map[string]any{"type": "boolean"},
		"frames":      map[string]any{"type": "integer", "minimum": 0},
		"limitations": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "what this capture could not observe"},
	}, "evidence_id", "resource")},
	"compare_process_captures": {title: "Compare two process captures", notes: readOnly("Compare two process captures"), output: objectOut(map[string]any{
		"evidence_id": stringSchema("ev_… id of the comparison"),
		"result":      map[string]any{"type": "object", "description": "per-dimension verdicts and the first divergence"},
	})}, // nothing required: the comparison's shape varies with its mode
	"run_replay_machine": {title: "Run a replay machine", notes: readOnly("Run a replay machine"), output: objectOut(nil)},
}

// objectOut is an object schema that allows more members than it names.
func objectOut(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object"}
	if props != nil {
		s["properties"] = props
	}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

var issueSchema = map[string]any{"type": "object", "required": []string{"path", "code", "message"}, "properties": map[string]any{
	"path":    stringSchema("JSON path of the problem in the arguments ($ is the whole)"),
	"code":    stringSchema("stable code"),
	"message": stringSchema("what is wrong"),
}}

// errorSchema is the one failure shape of every tool (mcp_errors.go).
var errorSchema = objectOut(map[string]any{
	"code":      stringSchema("stable code of the failure"),
	"message":   stringSchema("what happened, for the agent"),
	"retryable": map[string]any{"type": "boolean", "description": "calling again (as next_step says) can succeed"},
	"next_step": stringSchema("what to do now"),
	"issues":    map[string]any{"type": "array", "items": issueSchema},
}, "code", "message", "retryable", "next_step", "issues")

var runOutput = objectOut(nil) // refined below: an envelope or a pending ticket

func init() {
	runOutput = map[string]any{"type": "object", "anyOf": []any{
		objectOut(map[string]any{
			"status":   map[string]any{"enum": []string{"succeeded", "failed", "timeout", "cancelled", "output_limit", "cleanup_failed", "refused"}},
			"runId":    stringSchema("the run"),
			"output":   map[string]any{"type": []string{"object", "array", "string", "number", "boolean", "null"}, "description": "the script's result (on success), valid against the skill's outputSchema"},
			"errors":   map[string]any{"type": "array", "items": issueSchema},
			"cleanup":  map[string]any{"type": []string{"object", "null"}, "description": "whether every process of the run is proven gone, and by which mechanism"},
			"revision": stringSchema("sha256 of the exact script bytes that ran"),
		}, "status"),
		objectOut(map[string]any{
			"status":      map[string]any{"enum": []string{"awaiting_decision", "running"}},
			"ticket":      stringSchema("pass to await_run"),
			"proposal_id": stringSchema("the request shown to the person"),
			"expires_at":  stringSchema("when the request expires (RFC 3339)"),
			"message":     stringSchema("why the call returned before the run ended"),
			"next_step":   stringSchema("what to do now"),
		}, "status", "ticket", "next_step"),
	}}
}

// outputSchemaOf is the published output schema of a tool.
func outputSchemaOf(m toolMeta) map[string]any {
	return map[string]any{"type": "object", "anyOf": []any{m.output, errorSchema}}
}

// withToolMeta is the middleware that completes tools/list answers.
func withToolMeta(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, err
		}
		out := *lr
		out.Tools = make([]*mcp.Tool, len(lr.Tools))
		for i, tl := range lr.Tools {
			c := *tl // the server's own Tool must not be modified
			if m, ok := toolMetas[tl.Name]; ok {
				notes := m.notes
				c.Title, c.Annotations, c.OutputSchema = m.title, &notes, outputSchemaOf(m)
			}
			if file, ok := publishedInputs[tl.Name]; ok {
				c.InputSchema = publishedSchema(file)
			}
			if props, ok := publishedProperties[tl.Name]; ok {
				c.InputSchema = withPublishedProperties(c.InputSchema, props)
			}
			out.Tools[i] = &c
		}
		return &out, nil
	}
}

// publishedInputs are the tools whose input is one of the project's file
// formats: their input schema is the published document itself
// (docs/schemas), the one the parser is tested against.
var publishedInputs = map[string]string{
	"capture_process_scenario": "capture-scenario.schema.json",
	"run_replay_machine":       "replay-run.schema.json",
}

// publishedProperties are the tool arguments that are one of the
// project's file formats: tools/list publishes that format's schema as
// the argument's schema.
var publishedProperties = map[string]map[string]string{
	"compare_process_captures": {"trace_spec": "trace-spec.schema.json"},
}

// withPublishedProperties returns a copy of the object schema in with
// each named property's schema replaced by a published document. The
// document's own definitions move to the result's "$defs" (its "#/$defs/…"
// references then resolve there) and its "$schema" and "$id" are left
// out, so the result is one plain schema every client can compile; the
// property keeps its own description when the document has none.
func withPublishedProperties(in any, props map[string]string) map[string]any {
	var out map[string]any
	if err := json.Unmarshal(schemaJSON(in), &out); err != nil {
		panic(fmt.Sprintf("input schema: %v", err))
	}
	properties, _ := out["properties"].(map[string]any)
	defs, _ := out["$defs"].(map[string]any)
	if defs == nil {
		defs = map[string]any{}
	}
	for name, file := range props {
		doc := publishedSchema(file)
		docDefs, _ := doc["$defs"].(map[string]any)
		for k, v := range docDefs {
			if _, clash := defs[k]; clash {
				panic(fmt.Sprintf("published schema %s: definition %q already used", file, k))
			}
			defs[k] = v
		}
		delete(doc, "$defs")
		delete(doc, "$schema")
		delete(doc, "$id")
		properties[name] = doc
	}
	out["$defs"] = defs
	return out
}

// publishedSchema is one published schema, self-contained (docs.Bundled:
// a format used inside another is copied in); the files are embedded, so
// a failure is a build defect.
func publishedSchema(file string) map[string]any {
	m, err := docs.Bundled(file)
	if err != nil {
		panic(fmt.Sprintf("published schema %s: %v", file, err))
	}
	return m
}

// schemaJSON is a schema as the wire has it (tests compile it).
func schemaJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Every tool has a title, annotations and an output schema, and every
// result — success or failure — validates against that schema; failures
// have the one error shape.
func TestMCPToolMetadata(t *testing.T) {
	ts := startServer(t)
	agentID, cs := connectAgent(t, ts, "meta")
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Schema{}
	for _, tl := range tools.Tools {
		if tl.Title == "" || tl.Annotations == nil || tl.Annotations.Title == "" || tl.OutputSchema == nil {
			t.Errorf("%s: title %q annotations %+v output %v", tl.Name, tl.Title, tl.Annotations, tl.OutputSchema)
			continue
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("out.json", bytes.NewReader(schemaJSON(tl.OutputSchema))); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile("out.json")
		if err != nil {
			t.Fatalf("%s output schema: %v", tl.Name, err)
		}
		schemas[tl.Name] = s
	}
	readOnly := map[string]bool{"list_skills": true, "read_skill": true, "read_skill_resource": true, "await_run": true,
		"compare_process_captures": true, "run_replay_machine": true}
	for _, tl := range tools.Tools {
		if tl.Annotations != nil && tl.Annotations.ReadOnlyHint != readOnly[tl.Name] {
			t.Errorf("%s: readOnlyHint %v", tl.Name, tl.Annotations.ReadOnlyHint)
		}
		if !readOnly[tl.Name] && tl.Annotations != nil && tl.Annotations.DestructiveHint == nil {
			t.Errorf("%s: destructiveHint left to the default", tl.Name)
		}
	}
	check := func(name string, args map[string]any, wantError bool) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError != wantError {
			t.Fatalf("%s %v: isError %v: %s", name, args, res.IsError, textOf(res))
		}
		b, _ := json.Marshal(res.StructuredContent)
		var v any
		json.Unmarshal(b, &v)
		if err := schemas[name].Validate(v); err != nil {
			t.Fatalf("%s result does not match its output schema: %v\n%s", name, err, b)
		}
		out, _ := v.(map[string]any)
		if wantError {
			for _, k := range []string{"code", "message", "retryable", "next_step", "issues"} {
				if _, ok := out[k]; !ok {
					t.Fatalf("%s failure without %s: %s", name, k, b)
				}
			}
			if strings.Contains(string(b), "gatehouse skill") {
				t.Fatalf("%s failure gives CLI advice: %s", name, b)
			}
		}
		return out
	}
	check("list_skills", map[string]any{}, false)
	check("read_skill", map[string]any{"name": "text-metrics"}, false)
	check("read_skill_resource", map[string]any{"name": "memory-organization", "path": "references/REFERENCE.md"}, false)
	ws := t.TempDir()
	stop := approver(t, ts, agentID, true)
	check("run_skill", map[string]any{"name": "text-metrics", "input": map[string]any{"text": "a b"}, "workspace": ws}, false)
	stop()
	stop = approver(t, ts, agentID, false)
	denied := check("run_skill", map[string]any{"name": "text-metrics", "input": map[string]any{"text": "a b"}, "workspace": ws}, true)
	stop()
	if denied["code"] != "denied" || denied["retryable"] != false || denied["status"] != "refused" {
		t.Fatalf("denied run: %v", denied)
	}
	check("run_replay_machine", map[string]any{"machine": map[string]any{}, "events": []any{}}, true)
	check("await_run", map[string]any{"ticket": "nope"}, true)
	check("capture_process_scenario", map[string]any{"executable": 3}, true)
	check("compare_process_captures", map[string]any{"left_evidence_id": "x", "right_evidence_id": "y"}, true)

	// Argument errors keep their paths.
	for _, c := range []struct {
		tool string
		args map[string]any
		path string
	}{
		{"read_skill", map[string]any{"name": 7}, "$.name"},
		{"read_skill", map[string]any{"name": "../x"}, "$.name"},
		{"read_skill", map[string]any{"nme": "x"}, "$.nme"},
		{"read_skill_resource", map[string]any{"name": "text-metrics"}, "$.path"},
		{"run_skill", map[string]any{"name": "text-metrics", "input": "x", "workspace": ws}, "$.input"},
		{"run_skill", map[string]any{"name": "text-metrics", "input": map[string]any{}, "workspace": "rel"}, "$.workspace"},
		{"list_skills", map[string]any{"x": 1}, "$.x"},
		{"list_skills", map[string]any{"x-y": 1}, `$["x-y"]`},
		{"list_skills", map[string]any{"\x1b[2J\u202e": 1}, `$["\u001b[2J\u202e"]`},
	} {
		out := check(c.tool, c.args, true)
		issues, _ := out["issues"].([]any)
		if len(issues) == 0 || issues[0].(map[string]any)["path"] != c.path {
			t.Errorf("%s %v: issues %v, want path %s", c.tool, c.args, out["issues"], c.path)
		}
	}
}

// Binary skill files come back as blobs with a media type, byte for byte;
// list_skills says whether a skill is valid and bounds descriptions.
func TestMCPCatalogBlobsAndValidity(t *testing.T) {
	ts := startServer(t)
	root := t.TempDir()
	good := filepath.Join(root, "binary-skill")
	os.MkdirAll(filepath.Join(good, "assets"), 0o755)
	long := strings.Repeat("d", 1000) // within the frontmatter limit
	os.WriteFile(filepath.Join(good, "SKILL.md"), []byte("---\nname: binary-skill\ndescription: "+long+"\n---\n\n# B\n"), 0o644)
	png := append([]byte("\x89PNG\r\n\x1a\n"), 0xff, 0xfe, 0x00, 0x01)
	os.WriteFile(filepath.Join(good, "assets", "logo.png"), png, 0o644)
	bad := filepath.Join(root, "broken-skill")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "SKILL.md"), []byte("---\nname: other-name\n---\n"), 0o644)
	if _, err := ts.facade.SetSkillRoots(SetSkillRootsArgs{Roots: []string{root}}); err != nil {
		t.Fatal(err)
	}
	_, cs := connectAgent(t, ts, "catalog")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_skill_resource", Arguments: map[string]any{"name": "binary-skill", "path": "assets/logo.png"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, textOf(res))
	}
	er, ok := res.Content[0].(*mcp.EmbeddedResource)
	if !ok || er.Resource.MIMEType != "image/png" || !bytes.Equal(er.Resource.Blob, png) {
		t.Fatalf("binary file: %#v", res.Content[0])
	}
	if sc := structured(t, res); sc["encoding"] != "base64" || sc["size"].(float64) != float64(len(png)) {
		t.Fatalf("meta %v", sc)
	}
	_ = base64.StdEncoding
	list, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_skills", Arguments: map[string]any{}})
	rows := structured(t, list)["skills"].([]any)
	seen := 0
	for _, r := range rows {
		m := r.(map[string]any)
		switch m["name"] {
		case "broken-skill":
			seen++
			if m["valid"] != false || m["reason"] != "invalid" || m["issue"] == nil {
				t.Errorf("invalid skill listed as %v", m)
			}
		case "binary-skill":
			seen++
			if m["valid"] != true || len(m["description"].(string)) > maxListedDescription {
				t.Errorf("valid skill listed as %v", m)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("rows %v", rows)
	}
}

// A capture's result links its Evidence resource, and the resource list
// names it by its command.
func TestMCPCaptureLinkAndName(t *testing.T) {
	work := t.TempDir()
	setCaptureEnv(t, work)
	ts := startServer(t)
	_, cs := connectAgent(t, ts, "linker")
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "capture_process_scenario", Arguments: map[string]any{
		"approved": true, "executable": "/bin/echo", "arguments": []string{"linked"}, "working_directory": work, "timeout_ms": 5000}})
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, textOf(res))
	}
	var link *mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			link = l
		}
	}
	if link == nil || link.URI != structured(t, res)["resource"] || link.MIMEType != "application/json" {
		t.Fatalf("no resource link to the capture: %#v", res.Content)
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.Resources {
		if r.URI == link.URI {
			if !strings.Contains(r.Name, "echo") || !strings.Contains(r.Name, "linked") {
				t.Fatalf("resource named %q", r.Name)
			}
			return
		}
	}
	t.Fatalf("capture not listed: %+v", list.Resources)
}

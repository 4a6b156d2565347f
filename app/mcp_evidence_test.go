package app

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/library"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const replayRun = `{"events":[{"method":"GET","path":"/l","type":"http_request"}],"machine":{"initial_state":"start","max_transitions":100,"states":[{"name":"start"},{"name":"done","terminal":true}],"transitions":[{"actions":[{"body":"","status":200,"type":"http_response"}],"from":"start","id":"exit","max_uses":1,"to":"done","trigger":{"method":"GET","path":"/done","protocol":"http"}},{"actions":[{"body":"","status":200,"type":"http_response"}],"from":"start","id":"loop","max_uses":1,"to":"start","trigger":{"method":"GET","path":"/l","protocol":"http"}}]}}`

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &out)
	return out
}

func TestMCPReplayAndCompareTools(t *testing.T) {
	// Two captures of the same program, made by the CLI before the server
	// (and its process supervisor) starts in this test process. When the
	// output arrives depends on the scheduler (a loaded machine read
	// "hello" at 0 ms in one run and 10 ms in the other), so the captures
	// bucket time to capture.MaxTimeBucketMS: every time is 0 and the
	// terminals compare unchanged.
	work := t.TempDir()
	scenario := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(scenario, []byte(`{"approved":true,"executable":"/bin/sh","arguments":["-c","printf hello"],"working_directory":`+jsonString(work)+
		`,"timeout_ms":5000,"normalization":{"time_bucket_ms":`+strconv.Itoa(capture.MaxTimeBucketMS)+`}}`), 0o644)
	capEnv := dataEnv(t)
	for k, v := range map[string]string{"GATEHOUSE_PROCESS_CAPTURE_ENABLED": "1", "GATEHOUSE_PROCESS_ALLOW_EXTERNAL_NETWORK": "1",
		"GATEHOUSE_PROCESS_EXECUTABLE_ROOTS_JSON": `["/bin","/usr/bin"]`, "GATEHOUSE_PROCESS_WORKING_ROOTS_JSON": `["` + work + `"]`} {
		capEnv[k] = v
	}
	var ids []string
	for i := 0; i < 2; i++ {
		r := cli(t, capEnv, "capture-process", scenario)
		if r.status != 0 {
			t.Fatalf("capture: %s", r.stderr)
		}
		ids = append(ids, decode[struct {
			EvidenceID string `json:"evidence_id"`
		}](t, r.stdout).EvidenceID)
	}
	ts := startServer(t)
	for _, id := range ids { // the person imports them into the app's library
		b, err := os.ReadFile(filepath.Join(capEnv["GATEHOUSE_DATA_DIR"], "evidence", id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.facade.ImportEvidence(ImportEvidenceArgs{Name: id + ".json", Data: b}); err != nil {
			t.Fatal(err)
		}
	}
	_, cs := connectAgent(t, ts, "agent-evidence")

	var args map[string]any
	json.Unmarshal([]byte(replayRun), &args)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_replay_machine", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("replay: %v %v", err, res)
	}
	if out := structured(t, res); out["final_state"] != "start" {
		t.Fatalf("replay result %v", out)
	}
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_replay_machine", Arguments: map[string]any{"machine": map[string]any{}, "events": []any{}}})
	if !res.IsError {
		t.Fatal("invalid machine accepted")
	}

	// Saved captures the person has not shared do not exist for agents.
	compareArgs := map[string]any{"left_evidence_id": ids[0], "right_evidence_id": ids[1]}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "compare_process_captures", Arguments: compareArgs})
	if err != nil || !res.IsError || structured(t, res)["code"] != "evidence_not_found" {
		t.Fatalf("compare of unshared captures: %v %+v", err, res)
	}
	share(t, ts, ids[0], true)
	res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "compare_process_captures", Arguments: compareArgs})
	if !res.IsError || structured(t, res)["code"] != "evidence_not_found" {
		t.Fatalf("compare with one side unshared: %+v", res)
	}
	share(t, ts, ids[1], true)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "compare_process_captures", Arguments: compareArgs})
	if err != nil || res.IsError {
		t.Fatalf("compare: %v %+v", err, res)
	}
	out := structured(t, res)
	if !strings.HasPrefix(out["evidence_id"].(string), "ev_") || out["result"].(map[string]any)["terminal"] != "unchanged" {
		t.Fatalf("compare result %v", out)
	}
	if m := out["result"].(map[string]any)["mode"]; m != "behavior" { // the default
		t.Errorf("default mode %v", m)
	}
	for mode, ok := range map[string]bool{"exact": true, "behavior": true, "fuzzy": false} {
		res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "compare_process_captures", Arguments: map[string]any{"left_evidence_id": ids[0], "right_evidence_id": ids[1], "mode": mode}})
		if res.IsError == ok || ok && structured(t, res)["result"].(map[string]any)["mode"] != mode {
			t.Errorf("mode %s: %+v", mode, res)
		}
	}
	for _, bad := range []string{"ev_nope", "ev_" + strings.Repeat("0", 64), "../../gatehouse"} {
		res, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "compare_process_captures", Arguments: map[string]any{"left_evidence_id": bad, "right_evidence_id": ids[1]}})
		if !res.IsError {
			t.Fatalf("%s accepted", bad)
		}
	}
}

// share shares saved Evidence id with agents, or stops, as the person
// does in the Evidence view.
func share(t *testing.T, ts *testServer, id string, shared bool) {
	t.Helper()
	res, err := ts.facade.ShareEvidence(ShareEvidenceArgs{ID: id, Shared: shared})
	if err != nil || res.Item.Shared != shared || res.Item.EvidenceID != id {
		t.Fatalf("share %s %v: %+v %v", id, shared, res, err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestCapturesAreIndexed(t *testing.T) {
	work := t.TempDir()
	scenario := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(scenario, []byte(`{"approved":true,"executable":"/bin/sh","arguments":["-c","printf hi"],"working_directory":`+jsonString(work)+`,"timeout_ms":5000}`), 0o644)
	env := dataEnv(t)
	for k, v := range map[string]string{"GATEHOUSE_PROCESS_CAPTURE_ENABLED": "1", "GATEHOUSE_PROCESS_ALLOW_EXTERNAL_NETWORK": "1",
		"GATEHOUSE_PROCESS_EXECUTABLE_ROOTS_JSON": `["/bin","/usr/bin"]`, "GATEHOUSE_PROCESS_WORKING_ROOTS_JSON": `["` + work + `"]`} {
		env[k] = v
	}
	r := cli(t, env, "capture-process", scenario)
	if r.status != 0 {
		t.Fatal(r.stderr)
	}
	id := decode[struct {
		EvidenceID string `json:"evidence_id"`
	}](t, r.stdout).EvidenceID
	list := decode[struct {
		Evidence []struct {
			EvidenceID string `json:"evidence_id"`
			Path       string `json:"path"`
		}
	}](t, cli(t, env, "evidence", "list", "--json").stdout)
	if len(list.Evidence) != 1 || list.Evidence[0].EvidenceID != id {
		t.Fatalf("index %+v", list)
	}
	if r := cli(t, env, "evidence", "verify", list.Evidence[0].Path); r.status != 0 {
		t.Fatalf("indexed file does not verify: %s", r.stderr)
	}
}

func TestMCPCaptureToolAndConnectionLocalResources(t *testing.T) {
	work := t.TempDir()
	setCaptureEnv(t, work)
	ts := startServer(t)
	_, tokA := addAgent(t, ts, "capture-a")
	_, tokB := addAgent(t, ts, "capture-b")
	a := mcpConnect(t, ts, tokA)
	defer a.Close()
	changed := make(chan struct{}, 16) // b's resources/list_changed notifications
	b, err := mcpClientWith(t, ts, tokB, &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
		changed <- struct{}{}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	notified := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("no resources/list_changed notification after %s", what)
		}
	}
	scenario := map[string]any{"approved": true, "executable": "/bin/sh", "arguments": []string{"-c", "printf captured"}, "working_directory": work, "timeout_ms": 5000}
	res, err := a.CallTool(context.Background(), &mcp.CallToolParams{Name: "capture_process_scenario", Arguments: scenario})
	if err != nil || res.IsError {
		t.Fatalf("capture: %v %+v", err, res.Content)
	}
	out := structured(t, res)
	uri := out["resource"].(string)
	read, err := a.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil || !strings.Contains(read.Contents[0].Text, "captured") {
		t.Fatalf("own resource: %v", err)
	}
	if _, err := b.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Fatal("another connection read the capture")
	}
	listed := func(cs *mcp.ClientSession) []string {
		t.Helper()
		l, err := cs.ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range l.Resources {
			uris = append(uris, r.URI)
		}
		return uris
	}
	if got := listed(a); len(got) != 1 || got[0] != uri {
		t.Fatalf("capturing connection lists %v", got)
	}
	if got := listed(b); len(got) != 0 {
		t.Fatalf("other connection lists %v", got)
	}
	// The person shares it in the Evidence view: every connection lists
	// and reads it; unsharing takes it away again from the others.
	id := out["evidence_id"].(string)
	share(t, ts, id, true)
	notified("sharing")
	if got := listed(b); len(got) != 1 || got[0] != uri {
		t.Fatalf("after sharing, other connection lists %v", got)
	}
	if got := listed(a); len(got) != 1 {
		t.Fatalf("a capture both made here and shared is listed once: %v", got)
	}
	if read, err := b.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil || !strings.Contains(read.Contents[0].Text, "captured") {
		t.Fatalf("shared resource: %v", err)
	}
	share(t, ts, id, false)
	notified("unsharing")
	if _, err := b.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Fatal("unshared capture still readable by another connection")
	}
	if got := listed(b); len(got) != 0 {
		t.Fatalf("after unsharing, other connection lists %v", got)
	}
	if _, err := a.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil {
		t.Fatalf("the capturing connection keeps its own capture: %v", err)
	}
	// A saved file changed on disk no longer verifies: the agent gets an
	// integrity error, never the changed bytes, by read or comparison.
	path := library.FilePath(ts.facade.env.DataDir, id)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(orig), "captured", "kaptured", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := a.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), "evidence_integrity_mismatch") {
		t.Fatalf("tampered file read: %v", err)
	}
	res, _ = a.CallTool(context.Background(), &mcp.CallToolParams{Name: "compare_process_captures", Arguments: map[string]any{"left_evidence_id": id, "right_evidence_id": id}})
	if !res.IsError || structured(t, res)["code"] != "evidence_integrity_mismatch" {
		t.Fatalf("tampered file compared: %+v", structured(t, res))
	}
	os.WriteFile(path, orig, 0o600)
	if _, err := ts.facade.ShareEvidence(ShareEvidenceArgs{ID: "ev_" + strings.Repeat("0", 64), Shared: true}); codeOf(err) != "evidence_not_found" {
		t.Fatalf("sharing an unknown id: %v", err)
	}
	outside := map[string]any{"approved": true, "executable": "/bin/sh", "arguments": []string{"-c", "true"}, "working_directory": t.TempDir(), "timeout_ms": 5000}
	res, _ = a.CallTool(context.Background(), &mcp.CallToolParams{Name: "capture_process_scenario", Arguments: outside})
	if !res.IsError || structured(t, res)["code"] != "working_directory_outside_roots" {
		t.Fatalf("outside roots: %+v", structured(t, res))
	}
}

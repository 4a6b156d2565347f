package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// allowCaptures stores an operator policy that lets /bin/sh run in work.
func allowCaptures(t *testing.T, ts *testServer, work string) {
	t.Helper()
	s, _ := json.Marshal(map[string]any{"enabled": true, "executableRoots": []string{"/bin", "/usr/bin"}, "workingRoots": []string{work},
		"allowedEnv": []string{"PATH"}, "allowExternalNetwork": true, "autoGrant": false})
	if _, err := ts.facade.SetCapturePolicy(SetCapturePolicyArgs{Settings: s}); err != nil {
		t.Fatal(err)
	}
}

// setCaptureEnv turns process capture on through the environment, as an
// operator would, for the server the test starts next: executables under
// /bin and /usr/bin, working directories under work, external network
// allowed.
func setCaptureEnv(t *testing.T, work string) {
	t.Helper()
	t.Setenv("GATEHOUSE_PROCESS_CAPTURE_ENABLED", "1")
	t.Setenv("GATEHOUSE_PROCESS_ALLOW_EXTERNAL_NETWORK", "1")
	t.Setenv("GATEHOUSE_PROCESS_EXECUTABLE_ROOTS_JSON", `["/bin","/usr/bin"]`)
	t.Setenv("GATEHOUSE_PROCESS_WORKING_ROOTS_JSON", `["`+work+`"]`)
}

func uiScenario(work, script string, timeoutMS int) string {
	b, _ := json.Marshal(map[string]any{"approved": true, "executable": "/bin/sh", "arguments": []string{"-c", script},
		"working_directory": work, "environment": map[string]string{"PATH": "/usr/bin:/bin"}, "timeout_ms": timeoutMS})
	return string(b)
}

// waitCapture collects the capture events of id until its last one.
func waitCapture(t *testing.T, events <-chan UIEvent, id string) []CaptureEvent {
	t.Helper()
	var got []CaptureEvent
	deadline := time.After(60 * time.Second)
	for {
		select {
		case e := <-events:
			ce, ok := e.Data.(CaptureEvent)
			if e.Name != "capture" || !ok || ce.CaptureID != id {
				continue
			}
			got = append(got, ce)
			if ce.State == "done" || ce.State == "failed" || ce.State == "cancelled" {
				return got
			}
		case <-deadline:
			t.Fatalf("capture %s did not finish; events %+v", id, got)
		}
	}
}

func TestStartCaptureRunsSavesAndVerifies(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	allowCaptures(t, ts, work)
	events, stop := ts.facade.events.subscribe(256)
	defer stop()
	res, status, e := apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: uiScenario(work, "echo from the app; sleep 0.6", 10000)})
	if status != 200 || res.CaptureID == "" || res.TimeoutMS != 10000 || res.Command != "/bin/sh -c echo from the app; sleep 0.6" {
		t.Fatalf("start: %d %+v %+v", status, res, e)
	}
	got := waitCapture(t, events, res.CaptureID)
	last := got[len(got)-1]
	if last.State != "done" || last.EvidenceID == "" {
		t.Fatalf("outcome %+v", last)
	}
	running := 0
	for _, g := range got {
		if g.State == "running" {
			running++
		}
	}
	if running < 2 || got[len(got)-2].State != "saving" {
		t.Errorf("progress before the outcome: %+v", got)
	}
	// Saved into the library, verified (marked) and readable.
	if m, ok := ts.facade.env.lib().ReadMark(ts.facade.ctx, last.EvidenceID); !ok || !m.Result.RecordVerified {
		t.Errorf("the saved capture is not marked verified: %+v", m)
	}
	list, _, _ := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{})
	if len(list.Evidence) != 1 || list.Evidence[0].EvidenceID != last.EvidenceID || list.Evidence[0].Origin != OriginCaptured {
		t.Errorf("library %+v", list.Evidence)
	}
	if _, status, e := apiCall[GetEvidenceResult](t, ts, "GetEvidence", GetEvidenceArgs{ID: last.EvidenceID}); status != 200 {
		t.Errorf("open: %d %+v", status, e)
	}
	if _, status, e := apiCall[CancelCaptureResult](t, ts, "CancelCapture", CancelCaptureArgs{CaptureID: res.CaptureID}); status != 404 || e.Code != "capture_not_found" {
		t.Errorf("cancel a finished capture: %d %+v", status, e)
	}
}

func TestStartCaptureRefusesBeforeRunning(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	marker := filepath.Join(work, "ran")
	script := "touch " + marker
	// Field errors with their paths, all at once, from the backend's parser.
	bad, _ := json.Marshal(map[string]any{"approved": false, "executable": "sh", "working_directory": work, "timeout_ms": -1})
	_, status, e := apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: string(bad)})
	if status != 400 || e.Code != "invalid_scenario" {
		t.Fatalf("invalid scenario: %d %+v", status, e)
	}
	paths := issuePaths(t, e)
	for _, p := range []string{"$.approved", "$.executable", "$.timeout_ms"} {
		if _, ok := paths[p]; !ok {
			t.Errorf("no issue at %s in %v", p, paths)
		}
	}
	if _, status, e := apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: "{"}); status != 400 || e.Code != "invalid_scenario" {
		t.Errorf("not JSON: %d %+v", status, e)
	}
	// Capture disabled by the operator policy (the default): refused, nothing runs.
	if _, status, e := apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: uiScenario(work, script, 5000)}); status != 400 || e.Code != "capture_disabled" {
		t.Errorf("policy off: %d %+v", status, e)
	}
	// A working directory outside the policy's roots.
	allowCaptures(t, ts, t.TempDir())
	if _, status, e := apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: uiScenario(work, script, 5000)}); status != 400 || e.Code != "working_directory_outside_roots" {
		t.Errorf("outside the working roots: %d %+v", status, e)
	}
	refusedCaptureLeftNothing(t, ts, marker)
}

func TestCancelCaptureEndsItAndSavesNothing(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	allowCaptures(t, ts, work)
	events, stop := ts.facade.events.subscribe(256)
	defer stop()
	res, status, e := apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: uiScenario(work, "echo started; sleep 30", 60000)})
	if status != 200 {
		t.Fatalf("start: %d %+v", status, e)
	}
	// Cancel once it is running.
	for e := range events {
		if ce, ok := e.Data.(CaptureEvent); ok && ce.CaptureID == res.CaptureID && ce.State == "running" && ce.ElapsedMS > 0 {
			break
		}
	}
	if _, status, e := apiCall[CancelCaptureResult](t, ts, "CancelCapture", CancelCaptureArgs{CaptureID: res.CaptureID}); status != 200 {
		t.Fatalf("cancel: %d %+v", status, e)
	}
	got := waitCapture(t, events, res.CaptureID)
	last := got[len(got)-1]
	if last.State != "cancelled" || last.Error == nil || last.Error.Code != "cancelled" || last.EvidenceID != "" {
		t.Fatalf("outcome %+v", last)
	}
	if list, _, _ := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{}); len(list.Evidence) != 0 {
		t.Errorf("a cancelled capture saved Evidence: %+v", list.Evidence)
	}
	noCaptureLeftovers(t, ts.facade.env.DataDir)
}

// Cancel leaves no process of the capture behind: not the command, not
// a child that left its session and process group (setsid, double fork),
// whether the cancel comes at once (before the command may have started)
// or while it runs.
func TestCancelCaptureLeavesNoProcess(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	allowCaptures(t, ts, work)
	events, stop := ts.facade.events.subscribe(1024)
	defer stop()
	for _, waitRunning := range []bool{false, true} {
		marker := fmt.Sprintf("41.%d", time.Now().UnixNano()%1000000000)
		script := "(setsid sh -c 'sleep " + marker + "' &) ; sleep " + marker + "; echo never"
		res, status, e := apiCall[StartCaptureResult](t, ts, "StartCapture", StartCaptureArgs{Scenario: uiScenario(work, script, 60000)})
		if status != 200 {
			t.Fatalf("start: %d %+v", status, e)
		}
		if waitRunning {
			for len(processesWith(marker)) < 2 {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if _, status, e := apiCall[CancelCaptureResult](t, ts, "CancelCapture", CancelCaptureArgs{CaptureID: res.CaptureID}); status != 200 {
			t.Fatalf("cancel: %d %+v", status, e)
		}
		got := waitCapture(t, events, res.CaptureID)
		if last := got[len(got)-1]; last.State != "cancelled" {
			t.Fatalf("running=%v: outcome %+v", waitRunning, last)
		}
		if left := processesWith(marker); len(left) > 0 {
			t.Fatalf("running=%v: processes of a cancelled capture survived: %v", waitRunning, left)
		}
	}
	noCaptureLeftovers(t, ts.facade.env.DataDir)
}

// New capture, its cancel and the consent dialog's file viewer are the
// person's: an agent's token, no token, a wrong token or another origin
// is refused on the UI API and nothing runs; an MCP client sees no such
// tool and cannot call one by name.
func TestUIOnlyCallsRefuseEveryoneElse(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	allowCaptures(t, ts, work)
	_, agentTok := addAgent(t, ts, "agent-ui-only")
	marker := filepath.Join(work, "ran")
	start, _ := json.Marshal(StartCaptureArgs{Scenario: uiScenario(work, "touch "+marker, 5000)})
	for _, c := range []struct {
		name          string
		token, origin string
		want          int
	}{
		{"agent token", agentTok, ts.origin(), 403},
		{"no token", "", ts.origin(), 401},
		{"wrong token", strings.Repeat("0", len(ts.token)), ts.origin(), 403},
		{"UI token from another origin", ts.token, "http://evil.example", 403},
	} {
		for _, m := range []struct{ method, body string }{
			{"StartCapture", string(start)},
			{"CancelCapture", `{"capture_id":"cap_x"}`},
			{"ProposalFile", `{"proposalId":"p","path":"SKILL.md"}`},
		} {
			if status, _ := ts.do(t, req{method: "POST", path: "/api/" + m.method, body: m.body, origin: c.origin, token: c.token}); status != c.want {
				t.Errorf("%s: %s answered %d, want %d", c.name, m.method, status, c.want)
			}
		}
	}
	cs := mcpConnect(t, ts, agentTok)
	defer cs.Close()
	tools := listTools(t, cs)
	for _, tl := range tools.Tools {
		if n := strings.ToLower(tl.Name); strings.Contains(n, "startcapture") || strings.Contains(n, "start_capture") || strings.Contains(n, "proposal") {
			t.Errorf("MCP offers %s", tl.Name)
		}
	}
	for _, name := range []string{"StartCapture", "start_capture", "CancelCapture", "ProposalFile"} {
		if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(start)}); err == nil && !res.IsError {
			t.Errorf("MCP ran %s: %+v", name, res)
		}
	}
	refusedCaptureLeftNothing(t, ts, marker)
}

// TestStartCaptureAfterCloseIsRefused: once the facade has begun closing
// (its captures stopped and waited for), a StartCapture racing it is
// refused before anything runs, instead of adding to a WaitGroup that is
// being waited on and leaving a capture running past the close.
func TestStartCaptureAfterCloseIsRefused(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	allowCaptures(t, ts, work)
	marker := filepath.Join(work, "ran")
	ts.facade.captures.stop()
	_, err := ts.facade.StartCapture(StartCaptureArgs{Scenario: uiScenario(work, "touch "+marker, 5000)})
	if codeOf(err) != "shutting_down" {
		t.Fatalf("StartCapture after close: %v, want shutting_down", err)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("a capture started after close ran")
	}
}

// TestStartCaptureRacingCloseRace runs StartCapture against the captures'
// stop under -race: every start either is refused or is waited for.
func TestStartCaptureRacingCloseRace(t *testing.T) {
	ts := startServer(t)
	work := t.TempDir()
	allowCaptures(t, ts, work)
	done := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := ts.facade.StartCapture(StartCaptureArgs{Scenario: uiScenario(work, "true", 5000)})
			done <- err
		}()
	}
	ts.facade.captures.stop()
	for range 8 {
		if err := <-done; err != nil && codeOf(err) != "shutting_down" && codeOf(err) != "too_many_captures" {
			t.Errorf("StartCapture racing close: %v", err)
		}
	}
	ts.facade.captures.mu.Lock()
	n := len(ts.facade.captures.running)
	ts.facade.captures.mu.Unlock()
	if n != 0 {
		t.Errorf("%d captures still running after stop", n)
	}
}

// refusedCaptureLeftNothing fails the test when a refused capture ran
// (its command made marker) or saved Evidence.
func refusedCaptureLeftNothing(t *testing.T, ts *testServer, marker string) {
	t.Helper()
	if _, err := os.Stat(marker); err == nil {
		t.Error("a refused capture ran")
	}
	if list, _, _ := apiCall[ListEvidenceResult](t, ts, "ListEvidence", map[string]any{}); len(list.Evidence) != 0 {
		t.Errorf("a refused capture saved Evidence: %+v", list.Evidence)
	}
}

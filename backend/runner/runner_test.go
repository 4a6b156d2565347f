package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/bundle"
)

func TestSucceedsWithMJSAndCJS(t *testing.T) {
	for _, script := range []string{"echo.mjs", "echo.cjs"} {
		out := echoOutput
		if script == "echo.cjs" {
			out = `{"type":"object","properties":{"echo":{"type":"object","properties":{}},"cjs":{"type":"boolean"}},"required":["echo","cjs"]}`
		}
		r := runScript(t, script, `{"hello":"wörld 😀"}`, map[string]any{"outputSchema": json.RawMessage(out)})
		wantStatus(t, r, StatusSucceeded, "")
		e := r.Envelope
		if !strings.Contains(string(e.Output), `"echo":{"hello":"wörld 😀"}`) || *e.ExitCode != 0 || e.Signal != nil ||
			!e.Cleanup.Verified || e.Cleanup.Mechanism != "pid_namespace" || e.ExecutionReceiver != "ephemeral_process" ||
			e.Runtime.Path != testPin.Path || !strings.HasPrefix(e.Revision, "sha256:") {
			t.Fatalf("%s: %+v", script, e)
		}
		if script == "echo.cjs" && !strings.Contains(string(e.Output), `"cjs":true`) {
			t.Fatal("cjs entrypoint did not run as CommonJS")
		}
	}
}

func TestLaunchEnvironmentAndArgv(t *testing.T) {
	os.Setenv("NODE_OPTIONS", "--require /nonexistent.js")
	os.Setenv("AWS_SECRET_ACCESS_KEY", "leak")
	defer os.Unsetenv("NODE_OPTIONS")
	defer os.Unsetenv("AWS_SECRET_ACCESS_KEY")
	_, ex := testBundle(t, "protocol.mjs", map[string]any{"outputSchema": json.RawMessage(`{"type":"object","properties":{}}`)})
	req := request(t, ex, `{"mode":"env"}`)
	r := testRunner.Run(context.Background(), req)
	wantStatus(t, r, StatusSucceeded, "")
	var got struct {
		Echo struct {
			Env      map[string]string
			Cwd      string
			Argv     []string
			ExecArgv []string
		}
	}
	json.Unmarshal(r.Envelope.Output, &got)
	keys := []string{}
	for k := range got.Echo.Env {
		keys = append(keys, k)
	}
	want := map[string]bool{"PATH": true, "LANG": true, "LC_ALL": true, "TZ": true, "HOME": true, "TMPDIR": true, "GATEHOUSE_RUN_ID": true}
	for _, k := range keys {
		if !want[k] {
			t.Errorf("unexpected environment variable %s", k)
		}
	}
	if len(keys) != len(want) || got.Echo.Env["GATEHOUSE_RUN_ID"] != req.RunID || got.Echo.Env["PATH"] != minimalPath {
		t.Fatalf("environment %v", got.Echo.Env)
	}
	if got.Echo.Cwd != req.Workspace.Path {
		t.Fatalf("cwd %s, want workspace %s", got.Echo.Cwd, req.Workspace.Path)
	}
	if len(got.Echo.Argv) != 1 || !strings.HasSuffix(got.Echo.Argv[0], "/bundle/scripts/protocol.mjs") || len(got.Echo.ExecArgv) != 0 {
		t.Fatalf("argv %v execArgv %v", got.Echo.Argv, got.Echo.ExecArgv)
	}
	env, _ := json.Marshal(r.Envelope)
	for _, secret := range []string{"leak", "nonexistent.js"} {
		if strings.Contains(string(env), secret) {
			t.Fatalf("envelope contains %q", secret)
		}
	}
}

func TestProtocolNegatives(t *testing.T) {
	cases := []struct {
		name, input string
		over        map[string]any
		status      Status
		code        string
	}{
		{"no output", `{"mode":"none"}`, nil, StatusFailed, "missing_output"},
		{"two values", `{"mode":"two"}`, nil, StatusFailed, "trailing_data"},
		{"exactly at maxOutputBytes", `{"mode":"pad","n":89}`, map[string]any{"maxOutputBytes": 100}, StatusSucceeded, ""},
		{"one byte over maxOutputBytes", `{"mode":"pad","n":90}`, map[string]any{"maxOutputBytes": 100}, StatusOutputLimit, CodeStdoutLimit},
		{"NaN", `{"mode":"nan"}`, nil, StatusFailed, "invalid_json"},
		{"valid UTF-8 split across chunks", `{"mode":"split-valid"}`, nil, StatusSucceeded, ""},
		{"invalid UTF-8 split across chunks", `{"mode":"split-invalid"}`, nil, StatusFailed, "invalid_utf8"},
		{"stderr exactly 16 KiB", `{"mode":"stderr","n":16384}`, nil, StatusSucceeded, ""},
		{"stderr over 16 KiB", `{"mode":"stderr","n":16385}`, nil, StatusOutputLimit, CodeStderrLimit},
		{"nonzero exit with valid JSON", `{"mode":"exit3"}`, nil, StatusFailed, CodeNonzeroExit},
		{"output not matching outputSchema", `{"mode":"schema"}`, nil, StatusFailed, "unexpected_property"},
		{"timeout", `{"mode":"hang"}`, map[string]any{"timeoutMs": 1000}, StatusTimeout, CodeTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runScript(t, "protocol.mjs", c.input, c.over)
			wantStatus(t, r, c.status, c.code)
			if c.status != StatusSucceeded && r.Envelope.Output != nil {
				t.Fatal("output on failure")
			}
			if !r.Envelope.Cleanup.Verified {
				t.Fatalf("cleanup %+v", r.Envelope.Cleanup)
			}
			b, _ := json.Marshal(r.Envelope)
			if c.status != StatusSucceeded && strings.Contains(string(b), "xxxxxxxxxx") || strings.Contains(string(b), "eeeeeeeeee") {
				t.Fatal("envelope echoes raw script output")
			}
		})
	}
}

func TestInvalidInputIsRefusedBeforeSpawn(t *testing.T) {
	_, ex := testBundle(t, "echo.mjs", map[string]any{"inputSchema": json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`)})
	for _, in := range []string{`{"n":"1"}`, `[]`, `{"n":1} {}`, strings.Repeat(" ", 64<<10) + `{"n":1}`} {
		r := testRunner.Run(context.Background(), request(t, ex, in))
		if r.Envelope.Status != StatusRefused || r.Envelope.Cleanup != nil || !strings.HasPrefix(r.Envelope.Errors[0].Code, CodeInvalidInput) {
			t.Fatalf("%.20q: %+v", in, r.Envelope)
		}
	}
}

func TestCancellationBeforeAndDuring(t *testing.T) {
	_, ex := testBundle(t, "protocol.mjs", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := testRunner.Run(ctx, request(t, ex, `{"mode":"hang"}`))
	if r.Envelope.Status != StatusCancelled || r.Envelope.Cleanup != nil || r.Envelope.ExitCode != nil {
		t.Fatalf("cancel before: %+v", r.Envelope)
	}
	ctx, cancel = context.WithCancel(context.Background())
	events, stop := testJournal.Subscribe(64)
	defer stop()
	go func() {
		for e := range events {
			if e.Type == EventSpawned {
				cancel()
			}
		}
	}()
	r = testRunner.Run(ctx, request(t, ex, `{"mode":"hang"}`))
	wantStatus(t, r, StatusCancelled, CodeCancelled)
	if r.Envelope.Signal == nil || !r.Envelope.Cleanup.Verified {
		t.Fatalf("cancel during: %+v", r.Envelope)
	}
}

func TestPathNodeIsNeverUsed(t *testing.T) {
	fake := t.TempDir()
	marker := filepath.Join(t.TempDir(), "fake-node-ran")
	os.WriteFile(filepath.Join(fake, "node"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	old := os.Getenv("PATH")
	os.Setenv("PATH", fake+":"+old)
	defer os.Setenv("PATH", old)
	r := runScript(t, "echo.mjs", `{}`, nil)
	wantStatus(t, r, StatusSucceeded, "")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a node found on PATH was executed")
	}
}

func TestReplacedRuntimeIsRefused(t *testing.T) {
	dir := t.TempDir()
	copyPath := filepath.Join(dir, "node")
	b, err := os.ReadFile(testPin.Path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(copyPath, b, 0o755)
	pin := testPin
	pin.Path = copyPath
	_, ex := testBundle(t, "echo.mjs", nil)
	req := request(t, ex, `{}`)
	req.Pin = pin
	wantStatus(t, testRunner.Run(context.Background(), req), StatusSucceeded, "")
	// Replace the pinned file with different bytes of the same size.
	b[len(b)/2] ^= 0xff
	os.Remove(copyPath)
	os.WriteFile(copyPath, b, 0o755)
	req.RunID = newID()
	r := testRunner.Run(context.Background(), req)
	wantStatus(t, r, StatusRefused, CodeRuntimeChanged)
	if r.Envelope.ExitCode != nil {
		t.Fatal("refused run spawned a process")
	}
}

func TestSourceChangesAfterCaptureDoNotMatter(t *testing.T) {
	dir, ex := testBundle(t, "echo.mjs", nil)
	os.WriteFile(filepath.Join(dir, "scripts", "echo.mjs"), []byte(`process.stdout.write('{"echo":"tampered"}')`), 0o644)
	r := testRunner.Run(context.Background(), request(t, ex, `{"a":1}`))
	wantStatus(t, r, StatusSucceeded, "")
	if !strings.Contains(string(r.Envelope.Output), `{"a":1}`) {
		t.Fatalf("ran the modified source: %s", r.Envelope.Output)
	}
	os.RemoveAll(dir)
	wantStatus(t, testRunner.Run(context.Background(), request(t, ex, `{"a":1}`)), StatusSucceeded, "")
}

func TestWorkspaceReplacedIsRefused(t *testing.T) {
	_, ex := testBundle(t, "echo.mjs", nil)
	req := request(t, ex, `{}`)
	os.Rename(req.Workspace.Path, req.Workspace.Path+".old")
	os.Mkdir(req.Workspace.Path, 0o755)
	wantStatus(t, testRunner.Run(context.Background(), req), StatusRefused, CodeWorkspaceChanged)
}

func TestAuthorizeIsCheckedBeforeSpawn(t *testing.T) {
	_, ex := testBundle(t, "echo.mjs", nil)
	req := request(t, ex, `{}`)
	calls := 0
	req.Authorize = func(context.Context) error { calls++; return fmt.Errorf("consent already consumed") }
	r := testRunner.Run(context.Background(), req)
	wantStatus(t, r, StatusRefused, CodeNotAuthorized)
	if calls != 1 || r.Envelope.ExitCode != nil {
		t.Fatalf("calls %d, %+v", calls, r.Envelope)
	}
}

func TestProgressChannel(t *testing.T) {
	_, ex := testBundle(t, "protocol.mjs", nil)
	req := request(t, ex, `{"mode":"progress"}`)
	var got []Progress
	req.OnProgress = func(p Progress) { got = append(got, p) }
	r := testRunner.Run(context.Background(), req)
	wantStatus(t, r, StatusSucceeded, "")
	p := r.Envelope.Progress
	if p == nil || p.Completed != 3 || *p.Total != 3 || p.Lines != 3 || p.Dropped != 2 || len(got) != 3 || got[1].Message != "step 2" {
		t.Fatalf("progress %+v, got %+v", p, got)
	}
}

func TestJournalAndHistory(t *testing.T) {
	events, stop := testJournal.Subscribe(64)
	defer stop()
	r := runScript(t, "echo.mjs", `{}`, nil)
	wantStatus(t, r, StatusSucceeded, "")
	var types []string
	timeout := time.After(5 * time.Second)
	for len(types) == 0 || types[len(types)-1] != EventCompleted {
		select {
		case e := <-events:
			if e.AttemptID == r.Envelope.AttemptID {
				if e.ExecutionReceiver != "ephemeral_process" || e.RunID != r.Envelope.RunID || e.Revision != r.Envelope.Revision {
					t.Fatalf("event %+v", e)
				}
				types = append(types, e.Type)
			}
		case <-timeout:
			t.Fatalf("events so far %v", types)
		}
	}
	want := "staged,spawned,exited,cleaned,validated,completed"
	if strings.Join(types, ",") != want {
		t.Fatalf("events %v, want %s", types, want)
	}
	stored, err := testDB.RunEvents(context.Background(), r.Envelope.AttemptID)
	if err != nil || len(stored) != 6 {
		t.Fatalf("stored events %d %v", len(stored), err)
	}
	runs, _ := testDB.Runs(context.Background(), 1000)
	found := false
	for _, run := range runs {
		if run.AttemptID == r.Envelope.AttemptID && run.Status == "succeeded" && run.Agent == "local" {
			found = true
		}
	}
	if !found {
		t.Fatal("run missing from history")
	}
	// Refusals are recorded too.
	_, ex := testBundle(t, "echo.mjs", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ref := testRunner.Run(ctx, request(t, ex, `{}`))
	runs, _ = testDB.Runs(context.Background(), 1000)
	for _, run := range runs {
		if run.AttemptID == ref.Envelope.AttemptID {
			return
		}
	}
	t.Fatal("refusal missing from history")
}

// Compiled schemas are reused only for identical schemas: a bundle whose
// output schema the result does not meet fails between two that pass,
// whatever order they run in.
func TestSchemaReuseKeepsSchemasApart(t *testing.T) {
	_, ok := testBundle(t, "echo.mjs", nil)
	_, strict := testBundle(t, "echo.mjs", map[string]any{"outputSchema": json.RawMessage(`{"type":"object","properties":{"other":{"type":"string"}},"required":["other"],"additionalProperties":false}`)})
	for i, c := range []struct {
		ex   bundle.Execution
		want Status
	}{{ok, StatusSucceeded}, {strict, StatusFailed}, {ok, StatusSucceeded}, {strict, StatusFailed}} {
		if got := testRunner.Run(context.Background(), request(t, c.ex, `{"n":1}`)); got.Envelope.Status != c.want {
			t.Fatalf("run %d: %s, want %s: %+v", i, got.Envelope.Status, c.want, got.Envelope.Errors)
		}
	}
}

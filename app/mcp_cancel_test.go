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

	"github.com/gatehouse/gatehouse/internal/testfs"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// processWith reports whether any process's command line contains marker.
func processWith(marker string) bool {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err == nil && strings.Contains(string(b), marker) {
			return true
		}
	}
	return false
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// writeSlowSkill creates a skill whose script starts a grandchild (marked
// by marker) and never answers.
func writeSlowSkill(t *testing.T, marker string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "slow-skill")
	files := map[string]string{
		"SKILL.md": "---\nname: slow-skill\ndescription: Starts a child process and waits forever; used to test cancellation.\n---\n\n# Slow\n",
		"execution.json": `{"schemaVersion":1,"entrypoint":"scripts/run.mjs","files":["scripts/run.mjs"],` +
			`"inputSchema":{"type":"object","properties":{},"additionalProperties":false},"outputSchema":{"type":"object","properties":{}},"timeoutMs":60000,"maxOutputBytes":1024}`,
		"scripts/run.mjs": "import { spawn } from 'node:child_process';\n" +
			"spawn('/bin/sleep', ['" + marker + "'], { stdio: 'ignore', detached: true }).unref();\n" +
			"setInterval(() => {}, 1000);\n",
	}
	testfs.WriteTree(t, dir, files)
	return root
}

// Cancelling a tool call (the client gives up on it) cancels the run or
// the capture, and every process it started is gone afterwards.
func TestMCPCancelledCallsCleanUp(t *testing.T) {
	work := t.TempDir()
	setCaptureEnv(t, work)
	ts := startServer(t)
	// Per-run markers: processWith scans every process of the machine,
	// where another run of this test may have its own sleeps.
	n := time.Now().UnixNano() % 1e9
	runMarker, captureMarker := fmt.Sprintf("61.%09d", n), fmt.Sprintf("62.%09d", n)
	if _, err := ts.facade.SetSkillRoots(SetSkillRootsArgs{Roots: []string{writeSlowSkill(t, runMarker)}}); err != nil {
		t.Fatal(err)
	}
	agentID, cs := connectAgent(t, ts, "canceller")
	defer approver(t, ts, agentID, true)()

	for _, c := range []struct {
		name, marker string
		params       *mcp.CallToolParams
	}{
		{"run_skill", runMarker, &mcp.CallToolParams{Name: "run_skill", Arguments: map[string]any{"name": "slow-skill", "input": map[string]any{}, "workspace": work}}},
		{"capture", captureMarker, &mcp.CallToolParams{Name: "capture_process_scenario", Arguments: map[string]any{"approved": true, "executable": "/bin/sh",
			"arguments": []string{"-c", "sleep " + captureMarker + " & wait"}, "working_directory": work, "timeout_ms": 60000}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, err := cs.CallTool(ctx, c.params); done <- err }()
			waitFor(t, "the process to start", func() bool { return processWith(c.marker) })
			start := time.Now()
			cancel()
			if err := <-done; err == nil {
				t.Fatal("a cancelled call returned a result")
			}
			waitFor(t, "every process of the cancelled call to end", func() bool { return !processWith(c.marker) })
			t.Logf("processes gone %v after cancel", time.Since(start).Round(time.Millisecond))
		})
	}
	// The run is recorded as cancelled, with verified cleanup.
	waitFor(t, "the cancelled run in history", func() bool {
		runs, _ := ts.facade.ListRuns(ListRunsArgs{Skill: "slow-skill"})
		return len(runs.Runs) == 1 && runs.Runs[0].Status == "cancelled"
	})
	runs, _ := ts.facade.ListRuns(ListRunsArgs{Skill: "slow-skill"})
	var env struct {
		Cleanup *struct {
			Verified bool `json:"verified"`
		} `json:"cleanup"`
	}
	if err := json.Unmarshal(runs.Runs[0].Envelope, &env); err != nil || env.Cleanup == nil || !env.Cleanup.Verified {
		t.Fatalf("cleanup of the cancelled run: %s", runs.Runs[0].Envelope)
	}
	// The session is still usable after cancelled calls.
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_skills", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
}

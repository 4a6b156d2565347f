package app

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testfs"
)

// TestCrashMidRunIsRecordedInterrupted kills Gatehouse (SIGKILL, no
// chance to clean up) while a trusted run's script is running; the next
// start records that attempt in the run history as interrupted.
func TestCrashMidRunIsRecordedInterrupted(t *testing.T) {
	bin := buildBinary(t)
	dir := filepath.Join(t.TempDir(), "sleeper-skill")
	testfs.WriteTree(t, dir, map[string]string{
		"SKILL.md": "---\nname: sleeper-skill\ndescription: Sleeps.\n---\n",
		"scripts/run.mjs": `import { writeFileSync } from 'node:fs';
writeFileSync('started', 'yes'); setTimeout(() => process.stdout.write('{}'), 60000);
`,
		"execution.json": `{"schemaVersion":1,"entrypoint":"scripts/run.mjs","files":["scripts/run.mjs"],
"inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"object","properties":{}},"timeoutMs":90000,"maxOutputBytes":1024}`,
	})
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	input := filepath.Join(t.TempDir(), "in.json")
	os.WriteFile(input, []byte(`{}`), 0o644)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GATEHOUSE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")}
	gh := func(args ...string) (string, string, error) {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	out, stderr, err := gh("skill", "inspect", dir, "--json")
	if err != nil {
		t.Fatalf("inspect: %v %s", err, stderr)
	}
	var ins struct {
		Execution struct{ Revision string } `json:"execution"`
	}
	json.Unmarshal([]byte(out), &ins)
	pol := filepath.Join(t.TempDir(), "policy.json")
	os.WriteFile(pol, []byte(fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":false,"trusted":[{"revision":%q,"agentId":"local","workspace":%q,"timeoutMsCeiling":90000,"maxOutputBytesCeiling":1024}]}`,
		ins.Execution.Revision, ws)), 0o600)
	if _, stderr, err := gh("policy", "set", pol); err != nil {
		t.Fatalf("policy set: %v %s", err, stderr)
	}

	run := exec.Command(bin, "skill", "run", dir, "--input", input, "--workspace", ws, "--json")
	run.Env = env
	var runErr strings.Builder
	run.Stderr = &runErr
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(ws, "started")); err == nil {
			break
		}
		if i > 600 {
			run.Process.Kill()
			run.Wait()
			t.Fatalf("the script never started: %s", runErr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	run.Process.Kill() // the crash: no deferred cleanup, no history row
	run.Wait()

	out, stderr, err = gh("runs", "--json")
	if err != nil {
		t.Fatalf("runs: %v %s", err, stderr)
	}
	if !strings.Contains(stderr, "recorded as interrupted") {
		t.Errorf("the next start did not say so: %q", stderr)
	}
	var runs []struct {
		Skill, Status, Agent string
		AuthorizedBy         string `json:"authorized_by"`
	}
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		var wrapped struct {
			Runs []struct {
				Skill, Status, Agent string
				AuthorizedBy         string `json:"authorized_by"`
			} `json:"runs"`
		}
		if err := json.Unmarshal([]byte(out), &wrapped); err != nil {
			t.Fatalf("runs --json: %v\n%s", err, out)
		}
		for _, r := range wrapped.Runs {
			runs = append(runs, struct {
				Skill, Status, Agent string
				AuthorizedBy         string `json:"authorized_by"`
			}(r))
		}
	}
	if len(runs) != 1 || runs[0].Status != "interrupted" || runs[0].Skill != "sleeper-skill" || runs[0].Agent != "local" {
		t.Fatalf("run history after the crash: %s", out)
	}
	// Reconciled once: the following start adds nothing.
	if out2, stderr2, _ := gh("runs", "--json"); strings.Contains(stderr2, "interrupted") || strings.Count(out2, `"interrupted"`) != strings.Count(out, `"interrupted"`) {
		t.Fatalf("second start: %s %s", stderr2, out2)
	}
}

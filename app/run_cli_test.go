package app

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/internal/testfs"

	"github.com/creack/pty"
)

// buildBinary builds bin/gatehouse once for the tests that need a real
// process with a controlling terminal.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gatehouse")
	cmd := exec.Command("go", "build", "-o", bin, "..")
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// markerBundle writes a bundle whose script creates "ran" in its working
// directory, so a test can see whether anything executed.
func markerBundle(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "marker-skill")
	testfs.WriteTree(t, dir, map[string]string{
		"SKILL.md": "---\nname: marker-skill\ndescription: Drops a marker.\n---\n",
		"scripts/run.mjs": `import { writeFileSync } from 'node:fs';
let d = ''; process.stdin.on('data', (c) => { d += c; });
process.stdin.on('end', () => { writeFileSync('ran', d); process.stdout.write(JSON.stringify({ ok: true })); });
`,
		"execution.json": `{"schemaVersion":1,"entrypoint":"scripts/run.mjs","files":["scripts/run.mjs"],
"inputSchema":{"type":"object","properties":{"note":{"type":"string"}}},"outputSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]},
"timeoutMs":5000,"maxOutputBytes":1024}`,
	})
	return dir
}

type ttyRun struct {
	stdout string
	status int
	screen string
}

// runOnTerminal starts the binary with a pseudo-terminal as its controlling
// terminal, answers the consent prompt with answer, and collects stdout
// (separately from the terminal) and the exit status.
func runOnTerminal(t *testing.T, bin string, env []string, answer string, args ...string) ttyRun {
	t.Helper()
	return runOnTerminalTypedAhead(t, bin, env, "", answer, args...)
}

// runOnTerminalTypedAhead is runOnTerminal with ahead already typed on the
// terminal before Gatehouse starts (queued in the terminal's input).
func runOnTerminalTypedAhead(t *testing.T, bin string, env []string, ahead, answer string, args ...string) ttyRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	cmd.Stdin, cmd.Stderr = tty, tty
	cmd.SysProcAttr = ptySysProcAttr()
	if ahead != "" {
		if _, err := ptmx.Write([]byte(ahead)); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var mu sync.Mutex
	var screen strings.Builder
	prompted, readerDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(readerDone)
		r := bufio.NewReader(ptmx)
		buf := make([]byte, 4096)
		once := false
		for {
			n, err := r.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			seen := strings.Contains(screen.String(), "Approve this run? [y/N]")
			mu.Unlock()
			if !once && seen {
				once = true
				close(prompted)
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-prompted:
		ptmx.Write([]byte(answer + "\n"))
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("no consent prompt; screen:\n%s", screen.String())
	}
	err = cmd.Wait()
	select { // the terminal reports EOF/EIO once the child is gone
	case <-readerDone:
	case <-time.After(5 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	status := 0
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	}
	return ttyRun{stdout: stdout.String(), status: status, screen: screen.String()}
}

// TestSkillRunAsksOnARealTerminal is the end-to-end form of
// TestSkillRunAsksOnTheTerminal (whose case matrix runs in process): the
// built binary, started with a real pseudo-terminal as its controlling
// terminal, shows the consent summary there, runs after "yes" and refuses
// after "n"; detached from any terminal it refuses with
// permission_required.
func TestSkillRunAsksOnARealTerminal(t *testing.T) {
	bin := buildBinary(t)
	skill := markerBundle(t)
	input := filepath.Join(t.TempDir(), "in.json")
	os.WriteFile(input, []byte(`{"note":"hi"}`), 0o644)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GATEHOUSE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")}

	t.Run("approve", func(t *testing.T) {
		ws := t.TempDir()
		r := runOnTerminal(t, bin, env, "yes", "skill", "run", skill, "--input", input, "--workspace", ws)
		var e map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &e); err != nil || r.status != 0 || e["status"] != "succeeded" {
			t.Fatalf("status %d stdout %s screen %s", r.status, r.stdout, r.screen)
		}
		for _, want := range []string{"sha256:", "approved    new skill", "scripts/run.mjs", ws, `{"note":"hi"}`, "gatehouse: succeeded in "} {
			if !strings.Contains(r.screen, want) {
				t.Errorf("the terminal lacks %q:\n%s", want, r.screen)
			}
		}
		if b, err := os.ReadFile(filepath.Join(ws, "ran")); err != nil || string(b) != `{"note":"hi"}` {
			t.Fatalf("script did not run in the workspace: %v", err)
		}
	})
	t.Run("deny", func(t *testing.T) {
		ws := t.TempDir()
		r := runOnTerminal(t, bin, env, "n", "skill", "run", skill, "--input", input, "--workspace", ws)
		var e map[string]any
		json.Unmarshal([]byte(r.stdout), &e)
		if r.status == 0 || e["status"] != "refused" {
			t.Fatalf("status %d stdout %s", r.status, r.stdout)
		}
		if !strings.Contains(r.screen, "approved    same revision you approved on ") {
			t.Errorf("the revision approved above is not named as such:\n%s", r.screen)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Fatal("a denied script ran")
		}
	})
	t.Run("typed ahead", func(t *testing.T) {
		// A "yes" already waiting on the terminal (typed, pasted or
		// pushed there before the prompt was shown) answers nothing:
		// the prompt discards input typed before it, and the answer
		// given after it (no) decides.
		ws := t.TempDir()
		r := runOnTerminalTypedAhead(t, bin, env, "yes\n", "n", "skill", "run", skill, "--input", input, "--workspace", ws)
		var e map[string]any
		json.Unmarshal([]byte(r.stdout), &e)
		if r.status == 0 || e["status"] != "refused" {
			t.Fatalf("typeahead approved the run: status %d stdout %s screen %s", r.status, r.stdout, r.screen)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Fatal("a script approved only by typeahead ran")
		}
	})
	t.Run("no terminal", func(t *testing.T) {
		ws := t.TempDir()
		cmd := exec.Command(bin, "skill", "run", skill, "--input", "-", "--workspace", ws)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(`{"note":"hi"}`)
		cmd.SysProcAttr = noTTYSysProcAttr()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err == nil || !strings.Contains(stderr.String(), `"code":"permission_required"`) || stdout.Len() != 0 {
			t.Fatalf("err %v stdout %q stderr %q", err, stdout.String(), stderr.String())
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Fatal("ran without consent")
		}
	})
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// kill -9 of Gatehouse mid-run: the script dies with it (parent-death
// signal), a detached grandchild is ended by the next start's sweep, the
// staging is deleted unexecuted, and the history database still opens.
func TestCrashMidRunIsCleanedUpAtNextStart(t *testing.T) {
	bin := buildBinary(t)
	marker := fmt.Sprintf("gatehouse-crash-%d", time.Now().UnixNano())
	dir := filepath.Join(t.TempDir(), "crash-skill")
	testfs.WriteTree(t, dir, map[string]string{
		"SKILL.md": "---\nname: crash-skill\ndescription: Leaves a grandchild and hangs.\n---\n",
		"scripts/run.mjs": `import { spawn } from 'node:child_process';
spawn(process.execPath, ['-e', 'setInterval(()=>{},1000)', '` + marker + `'], { stdio: 'ignore', detached: true }).unref();
setInterval(() => {}, 1000);
`,
		"execution.json": `{"schemaVersion":1,"entrypoint":"scripts/run.mjs","files":["scripts/run.mjs"],
"inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"null"},"timeoutMs":120000,"maxOutputBytes":16}`,
	})
	data := filepath.Join(t.TempDir(), "data")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GATEHOUSE_DATA_DIR=" + data}

	cmd := exec.Command(bin, "skill", "run", dir, "--input", "-", "--workspace", t.TempDir())
	cmd.Env = env
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader("{}"), io.Discard, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 3}
	cmd.ExtraFiles = []*os.File{tty}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	waitForPrompt(t, ptmx)
	go io.Copy(io.Discard, ptmx)
	ptmx.Write([]byte("y\n"))
	deadline := time.Now().Add(15 * time.Second)
	for len(processesWith(marker)) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the script never started its grandchild")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// This run's script: its staging lies under this test's data directory
	// (another run of the suite on the machine may run a run.mjs too).
	var rootNode []int
	for _, pid := range processesWith(filepath.Join("bundle", "scripts", "run.mjs")) {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(b), data) {
			rootNode = append(rootNode, pid)
		}
	}
	if len(rootNode) == 0 {
		t.Fatal("fixture: the script of this run is not running")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for _, pid := range rootNode {
		waitGone(t, pid)
	}
	// With a PID namespace per attempt, the crash itself ends the
	// grandchild (the root, the namespace's init, dies of its parent-death
	// signal and the kernel ends the namespace); without one it outlives
	// the crash until the next start sweeps it.
	if len(processesWith(marker)) == 0 {
		t.Log("the grandchild ended with the crash (PID namespace)")
	}
	runs, _ := os.ReadDir(filepath.Join(data, "runs"))
	if len(runs) == 0 {
		t.Fatal("fixture: the crash should leave staging behind")
	}

	next := exec.Command(bin, "runs", "--json")
	next.Env = env
	out, err := next.Output()
	if err != nil {
		t.Fatalf("next start: %v", err)
	}
	if left := processesWith(marker); len(left) > 0 {
		t.Fatalf("the next start did not end the leftover: %v", left)
	}
	if runs, _ := os.ReadDir(filepath.Join(data, "runs")); len(runs) != 0 {
		t.Fatalf("staging left after the next start: %d entries", len(runs))
	}
	if !json.Valid(out) {
		t.Fatalf("history unreadable after the crash: %s", out)
	}
}

// waitForPrompt reads the terminal until the consent prompt appears.
func waitForPrompt(t *testing.T, ptmx *os.File) {
	t.Helper()
	ptmx.SetReadDeadline(time.Now().Add(20 * time.Second))
	defer ptmx.SetReadDeadline(time.Time{})
	var screen []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(screen, []byte("Approve this run? [y/N]")) {
		n, err := ptmx.Read(buf)
		screen = append(screen, buf[:n]...)
		if err != nil {
			t.Fatalf("no consent prompt (%v):\n%s", err, screen)
		}
	}
}

// processesWith lists live pids whose command line contains s.
func processesWith(s string) []int { return liveProcessesWhose("cmdline", s) }

// liveProcessesWhose lists the live (not zombie) pids whose /proc file
// (cmdline, environ) contains s.
func liveProcessesWhose(file, s string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/" + file)
		st, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err == nil && strings.Contains(string(b), s) && !strings.Contains(string(st), ") Z ") {
			out = append(out, pid)
		}
	}
	return out
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d outlived Gatehouse (no parent-death signal?)", pid)
}

package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDesktopAttention drives the real desktop window (GATEHOUSE_DESKTOP_BIN,
// built by `make desktop`) on an X display (DISPLAY, Xvfb in CI) and a real
// session bus: an agent's request while the window is not focused sets the
// window's urgency hint and reaches the notification server on the bus
// with the agent and the skill; a click on it presents the window (it
// takes the input focus and drops its urgency hint). A second launch on the same data directory then hands over
// and exits without taking the agents' runtime file from the window.
// `make desktop-attention` runs it.
func TestDesktopAttention(t *testing.T) {
	bin := os.Getenv("GATEHOUSE_DESKTOP_BIN")
	if bin == "" || os.Getenv("DISPLAY") == "" {
		t.Skip("needs GATEHOUSE_DESKTOP_BIN and DISPLAY (make desktop-attention)")
	}
	for _, tool := range []string{"xwininfo", "xprop", "xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing (Debian packages x11-utils, xdotool)", tool)
		}
	}
	sessionBus(t)
	srv := startNotifyServer(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	env := append(os.Environ(), "GATEHOUSE_DATA_DIR="+dataDir)
	add := exec.Command(bin, "agent", "add", "desk-agent", "--json")
	add.Env = env
	out, err := add.Output()
	if err != nil {
		t.Fatalf("agent add: %v", err)
	}
	var agent struct{ Token string }
	if err := json.Unmarshal(out, &agent); err != nil || agent.Token == "" {
		t.Fatalf("agent add printed %q", out)
	}
	app := exec.Command(bin, "desktop")
	app.Env = env
	stderr, _ := app.StderrPipe()
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { app.Process.Kill(); app.Wait() })
	go func() { // keep the pipe drained; show what the app says when the test fails
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log("app: " + sc.Text())
		}
	}()

	win := pollFor(t, "the Gatehouse window", func() (string, bool) {
		o, _ := exec.Command("xwininfo", "-root", "-tree").Output()
		m := regexp.MustCompile(`(?m)^\s*(0x[0-9a-f]+) "Gatehouse": \(`).FindSubmatch(o)
		if m == nil {
			return "", false
		}
		return string(m[1]), true
	})
	ri := pollFor(t, "the runtime file", func() (RuntimeInfo, bool) {
		ri, err := readRuntimeFile(dataDir)
		return ri, err == nil && ri.PID == app.Process.Pid
	})
	// Without a window manager X focus follows the pointer root and GTK
	// calls the window active; give the focus to the root window, as a
	// person switching to another application would.
	if err := exec.Command("xdotool", "windowfocus", rootWindow(t)).Run(); err != nil {
		t.Fatalf("xdotool windowfocus: %v", err)
	}
	if urgent(t, win) {
		t.Fatal("the window is urgent before anything was asked")
	}
	cs, err := mcpClientWith(t, &testServer{base: ri.URL}, agent.Token, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res := callAsync(cs, "run_skill", map[string]any{"name": "text-metrics", "input": map[string]any{"text": "hello"}, "workspace": t.TempDir()})
	var c notifyCall
	select {
	case c = <-srv.calls:
	case r := <-res:
		t.Fatalf("the agent's call ended before any notification: %+v", structured(t, r))
	case <-time.After(60 * time.Second):
		t.Fatal("no Notify call from the desktop app")
	}
	if !strings.Contains(c.Body, "desk-agent") || !strings.Contains(c.Summary+c.Body, "text-metrics") {
		t.Fatalf("the notification does not say who asks for what: %+v", c)
	}
	pollFor(t, "the urgency hint", func() (bool, bool) { return true, urgent(t, win) })
	// The person clicks the notification: the window comes to the front
	// (it has the X input focus and, active now, drops its urgency hint).
	srv.click(t, c.ID)
	pollFor(t, "the window focused by the click", func() (bool, bool) {
		return true, inputFocus(t) == win && !urgent(t, win)
	})
	cs.Close() // the agent goes away: its request is cancelled
	wait(t, res)
	if id := nextCall(t, srv.closed, "CloseNotification"); id != c.ID {
		t.Fatalf("closed %d, want %d", id, c.ID)
	}
	// Last: the window the second launch hands over to comes to the front.
	secondLaunchKeepsTheWindow(t, bin, env, dataDir, ri)
}

// secondLaunchKeepsTheWindow launches the app again on the same data
// directory: it hands over to the running window and exits with status 1
// (Wails' single-instance lock, an os.Exit inside wails.Run) without
// having served agents, so the runtime file still names the window and
// agents keep reaching it (the MCP call that follows uses it).
func secondLaunchKeepsTheWindow(t *testing.T, bin string, env []string, dataDir string, first RuntimeInfo) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	second := exec.CommandContext(ctx, bin, "desktop", "--view", "runs")
	second.Env = env
	out, err := second.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("second launch: %v (want exit status 1 after handing over)\n%s", err, out)
	}
	got, err := readRuntimeFile(dataDir)
	if err != nil || got != first {
		t.Fatalf("after a second launch the runtime file is %+v (%v), want the window's %+v", got, err, first)
	}
}

// inputFocus returns the X window holding the input focus, in xwininfo's
// hexadecimal form.
func inputFocus(t *testing.T) string {
	t.Helper()
	o, err := exec.Command("xdotool", "getwindowfocus").Output()
	if err != nil {
		t.Fatalf("xdotool getwindowfocus: %v", err)
	}
	id, err := strconv.ParseUint(strings.TrimSpace(string(o)), 10, 64)
	if err != nil {
		t.Fatalf("xdotool getwindowfocus printed %q", o)
	}
	return fmt.Sprintf("0x%x", id)
}

func rootWindow(t *testing.T) string {
	t.Helper()
	o, err := exec.Command("xwininfo", "-root").Output()
	m := regexp.MustCompile(`Window id: (0x[0-9a-f]+)`).FindSubmatch(o)
	if err != nil || m == nil {
		t.Fatalf("xwininfo -root: %v %q", err, o)
	}
	return string(m[1])
}

// urgent reports whether the X window's WM_HINTS carry the urgency flag
// (XUrgencyHint, bit 8).
func urgent(t *testing.T, win string) bool {
	t.Helper()
	o, err := exec.Command("xprop", "-id", win, "-f", "WM_HINTS", "32x", " $0+", "WM_HINTS").Output()
	if err != nil {
		t.Fatalf("xprop: %v", err)
	}
	// "WM_HINTS(WM_HINTS) 0x67, 0x1, ...": the first number holds the flags.
	m := regexp.MustCompile(`WM_HINTS\(WM_HINTS\) (0x[0-9a-f]+)`).FindSubmatch(o)
	if m == nil {
		return false
	}
	var flags uint64
	for _, ch := range string(m[1][2:]) {
		flags = flags*16 + uint64(strings.IndexRune("0123456789abcdef", ch))
	}
	return flags&(1<<8) != 0
}

// pollFor polls cond (an observation of another process, which cannot
// signal the test) until it holds or 60 s pass.
func pollFor[T any](t *testing.T, what string, cond func() (T, bool)) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		if v, ok := cond(); ok {
			return v
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

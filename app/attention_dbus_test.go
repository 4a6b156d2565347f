package app

import (
	"bufio"
	"context"
	iopkg "io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// sessionBus gives the test a real D-Bus session bus: the one of
// `dbus-run-session` when the test runs under it, else a dbus-daemon of
// its own for the test's lifetime.
func sessionBus(t *testing.T) {
	t.Helper()
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return
	}
	bin, err := exec.LookPath("dbus-daemon")
	if err != nil {
		t.Skip("no dbus-daemon (Debian package dbus); CI installs it")
	}
	cmd := exec.Command(bin, "--session", "--nofork", "--nopidfile", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = iopkg.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
}

// notifyCall is one Notify call the test notification server received.
type notifyCall struct {
	ID            uint32
	App, Icon     string
	Summary, Body string
	Actions       []string
	Hints         map[string]dbus.Variant
}

// testNotifyServer is a notification server on the session bus that
// records what it is asked to show.
type testNotifyServer struct {
	conn   *dbus.Conn
	mu     sync.Mutex
	next   uint32
	calls  chan notifyCall
	closed chan uint32
}

func (s *testNotifyServer) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	s.mu.Lock()
	s.next++
	id := s.next
	s.mu.Unlock()
	s.calls <- notifyCall{ID: id, App: app, Icon: icon, Summary: summary, Body: body, Actions: actions, Hints: hints}
	return id, nil
}

func (s *testNotifyServer) CloseNotification(id uint32) *dbus.Error {
	s.closed <- id
	return nil
}

func (s *testNotifyServer) GetCapabilities() ([]string, *dbus.Error) {
	return []string{"actions", "body"}, nil
}

func (s *testNotifyServer) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "gatehouse-test", "gatehouse", "1", "1.2", nil
}

func (s *testNotifyServer) click(t *testing.T, id uint32) {
	t.Helper()
	if err := s.conn.Emit(notifyPath, notifyIface+".ActionInvoked", id, notifyAction); err != nil {
		t.Fatal(err)
	}
}

func startNotifyServer(t *testing.T) *testNotifyServer {
	t.Helper()
	conn, err := dbus.SessionBusPrivate()
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Auth(nil); err != nil {
		t.Fatal(err)
	}
	if err := conn.Hello(); err != nil {
		t.Fatal(err)
	}
	s := &testNotifyServer{conn: conn, calls: make(chan notifyCall, 16), closed: make(chan uint32, 16)}
	if err := conn.Export(s, notifyPath, notifyIface); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName(notifyName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("cannot own %s: %v (reply %d)", notifyName, err, reply)
	}
	t.Cleanup(func() { conn.Close() })
	return s
}

// recordingWindow stands in for the GTK window (the real one is driven in
// the desktop attention test under Xvfb).
type recordingWindow struct {
	mu                  sync.Mutex
	focused             bool
	attention, presents int
	asked               chan bool // each Focused answer: the loop reached a pending request
}

func (w *recordingWindow) Focused() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.asked <- w.focused
	return w.focused
}
func (w *recordingWindow) RequestAttention() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.attention++
}
func (w *recordingWindow) Present() { w.mu.Lock(); defer w.mu.Unlock(); w.presents++ }
func (w *recordingWindow) counts() (int, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.attention, w.presents
}

func nextCall[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("no %s", what)
		var zero T
		return zero
	}
}

// TestAttentionNotifiesOverDBus: an agent's request while the window is
// unfocused flags the window and reaches a real session bus's
// notification server with the agent and the skill; clicking it presents
// the window and tells the UI which request to show; deciding withdraws
// it; the setting and a focused window stop it.
func TestAttentionNotifiesOverDBus(t *testing.T) {
	sessionBus(t)
	srv := startNotifyServer(t)
	ts := startServer(t)
	_, cs := connectAgent(t, ts, "research-bot")
	n, err := newDBusNotifier()
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	win := &recordingWindow{asked: make(chan bool, 16)}
	stop := startAttention(ts.facade, win, n, iopkg.Discard)
	defer stop()
	events, unsub := ts.facade.events.subscribe(64)
	defer unsub()
	ask := func(text string) (ProposalView, func()) {
		res := callAsync(cs, "run_skill", map[string]any{"name": "text-metrics", "input": map[string]any{"text": text}, "workspace": t.TempDir()})
		p := raisedOf[ProposalView](t, events, "proposal")
		nextCall(t, win.asked, "the attention loop to see the request")
		return p, func() {
			if _, err := ts.facade.Decide(DecideArgs{ProposalID: p.ID, Approve: false}); err != nil {
				t.Fatal(err)
			}
			wait(t, res)
		}
	}

	p, deny := ask("one")
	c := nextCall(t, srv.calls, "Notify call")
	if !strings.Contains(c.Body, "research-bot") || !strings.Contains(c.Body, "text-metrics") || !strings.Contains(c.Summary, "text-metrics") {
		t.Fatalf("the notification does not say who asks for what: %+v", c)
	}
	if c.App != "Gatehouse" || len(c.Actions) != 2 || c.Actions[0] != "default" || c.Hints["desktop-entry"].Value() != "gatehouse" {
		t.Fatalf("notification: %+v", c)
	}
	if a, _ := win.counts(); a != 1 {
		t.Fatalf("the window was flagged %d times, want 1", a)
	}
	srv.click(t, c.ID)
	for {
		e := nextCall(t, events, "attention event")
		if ae, ok := e.Data.(attentionEvent); ok && e.Name == "attention" {
			if ae.Focus != p.ID || ae.Kind != "proposal" {
				t.Fatalf("attention event %+v, want the proposal %s", ae, p.ID)
			}
			break
		}
	}
	if _, pr := win.counts(); pr != 1 {
		t.Fatalf("the click presented the window %d times", pr)
	}
	deny()
	if id := nextCall(t, srv.closed, "CloseNotification"); id != c.ID {
		t.Fatalf("closed notification %d, want %d", id, c.ID)
	}

	// Turned off: the window is still flagged, but nothing is shown. The
	// next request (notifications on again) proves the loop handled it.
	if _, err := ts.facade.SetAttention(AttentionSettings{Notifications: false}); err != nil {
		t.Fatal(err)
	}
	_, deny = ask("two")
	deny()
	if _, err := ts.facade.SetAttention(AttentionSettings{Notifications: true}); err != nil {
		t.Fatal(err)
	}
	// Focused: no attention, no notification.
	win.mu.Lock()
	win.focused = true
	win.mu.Unlock()
	_, deny = ask("three")
	deny()
	win.mu.Lock()
	win.focused = false
	win.mu.Unlock()
	_, deny = ask("four")
	c4 := nextCall(t, srv.calls, "Notify call")
	deny()
	if !strings.Contains(c4.Body, "research-bot") || c4.ID != c.ID+1 {
		t.Fatalf("a notification was shown while turned off or focused (got id %d after %d): %+v", c4.ID, c.ID, c4)
	}
	if a, _ := win.counts(); a != 3 {
		t.Fatalf("the window was flagged %d times, want 3 (one, two and four)", a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if s, err := ts.facade.attentionSettings(ctx); err != nil || !s.Notifications {
		t.Fatalf("settings: %+v %v", s, err)
	}
}

package app

import (
	"context"
	"fmt"
	iopkg "io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// attentionWindow is the desktop window as far as getting the person's
// attention goes (see window_gtk.go). Browser mode has none: the page
// does its own (tab title, browser notifications).
type attentionWindow interface {
	// Focused reports whether the window has the keyboard focus now.
	Focused() bool
	// RequestAttention un-minimises the window and sets its urgency hint,
	// without taking the focus from what the person is doing.
	RequestAttention()
	// Present brings the window to the front and focuses it (the person
	// clicked the notification).
	Present()
}

// notifier shows desktop notifications (notify_dbus.go).
type notifier interface {
	// Notify shows n and returns the notification's id.
	Notify(ctx context.Context, n notice) (uint32, error)
	// Withdraw closes a notification that no longer applies.
	Withdraw(ctx context.Context, id uint32)
	// Clicked delivers the ids of notifications the person activated.
	Clicked() <-chan uint32
}

// notice is one desktop notification about one request.
type notice struct {
	Kind    string // proposal, plan or grant
	ID      string // the request's id
	Summary string
	Body    string
}

// attentionEvent tells every window which request the person asked to
// see (they clicked its notification).
type attentionEvent struct {
	Focus string `json:"focus"`
	Kind  string `json:"kind"`
}

// attention watches the UI events for requests that need a decision and,
// while the window is not focused, asks for attention and notifies.
type attention struct {
	f      *Facade
	win    attentionWindow
	notify notifier // nil: no notification service (no session bus)
	errw   iopkg.Writer

	mu    sync.Mutex
	shown map[uint32]notice // notification id → request
	byReq map[string]uint32 // request id → notification id
	early map[uint32]bool   // clicks that arrived before Notify's reply
}

// startAttention runs the attention loop until the returned stop is
// called (or the facade closes).
func startAttention(f *Facade, win attentionWindow, n notifier, errw iopkg.Writer) (stop func()) {
	a := &attention{f: f, win: win, notify: n, errw: errw, shown: map[uint32]notice{}, byReq: map[string]uint32{}, early: map[uint32]bool{}}
	events, unsub := f.events.subscribe(256)
	ctx, cancel := context.WithCancel(f.ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for e := range events {
			a.handle(ctx, e)
		}
	}()
	if n != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case id := <-n.Clicked():
					a.clicked(id)
				}
			}
		}()
	}
	return func() { unsub(); cancel(); wg.Wait() }
}

func (a *attention) handle(ctx context.Context, e UIEvent) {
	m, ok := e.Data.(map[string]any)
	if !ok {
		return
	}
	typ, _ := m["type"].(string)
	n, state, ok := requestNotice(e.Name, m[e.Name])
	if !ok {
		return
	}
	if typ != "raised" || state != "pending" {
		a.withdraw(ctx, n.ID) // decided, expired or withdrawn: the notification is stale
		return
	}
	if a.win == nil || a.win.Focused() {
		return
	}
	a.win.RequestAttention()
	if a.notify == nil || !a.f.notificationsOn(ctx) {
		return
	}
	id, err := a.notify.Notify(ctx, n)
	if err != nil {
		fmt.Fprintf(a.errw, "gatehouse: warning: desktop notification: %v\n", err)
		return
	}
	a.mu.Lock()
	a.shown[id] = n
	a.byReq[n.ID] = id
	early := a.early[id]
	delete(a.early, id)
	a.mu.Unlock()
	if early {
		a.clicked(id)
	}
}

func (a *attention) withdraw(ctx context.Context, reqID string) {
	a.mu.Lock()
	id, ok := a.byReq[reqID]
	delete(a.byReq, reqID)
	delete(a.shown, id)
	a.mu.Unlock()
	if ok && a.notify != nil {
		a.notify.Withdraw(ctx, id)
	}
}

func (a *attention) clicked(id uint32) {
	a.mu.Lock()
	n, ok := a.shown[id]
	if !ok && len(a.early) < 16 {
		// A server may signal the click before its reply to Notify
		// reaches us; handle remembers it. Ids that never turn out to be
		// ours stay here, bounded.
		a.early[id] = true
	}
	a.mu.Unlock()
	if !ok {
		return
	}
	if a.win != nil {
		a.win.Present()
	}
	a.f.events.publish("attention", attentionEvent{Focus: n.ID, Kind: n.Kind})
}

// requestNotice builds the notification of one request event's payload.
// Agent names, skill names and commands are untrusted: every piece goes
// through notifyText.
func requestNotice(kind string, v any) (notice, string, bool) {
	switch kind {
	case "proposal":
		p, ok := v.(ProposalView)
		if !ok {
			return notice{}, "", false
		}
		who := agentLabel(p.Agent)
		return notice{Kind: kind, ID: p.ID,
			Summary: "Approval needed: " + notifyText(p.Skill, 60),
			Body:    fmt.Sprintf("%s asks to run the skill “%s” (%s).", who, notifyText(p.Skill, 80), notifyText(p.Entrypoint, 80)),
		}, p.State, true
	case "plan":
		p, ok := v.(PlanView)
		if !ok {
			return notice{}, "", false
		}
		names := make([]string, 0, len(p.Steps))
		for i, s := range p.Steps {
			if i == 4 {
				names = append(names, fmt.Sprintf("and %d more", len(p.Steps)-4))
				break
			}
			names = append(names, "“"+notifyText(s.Skill, 40)+"”")
		}
		return notice{Kind: kind, ID: p.ID,
			Summary: "Approval needed: a plan of " + plural(len(p.Steps), "step"),
			Body:    fmt.Sprintf("%s proposes a workflow plan running %s.", agentLabel(p.Agent), strings.Join(names, ", ")),
		}, p.State, true
	case "grant":
		g, ok := v.(GrantView)
		if !ok {
			return notice{}, "", false
		}
		return notice{Kind: kind, ID: g.ID,
			Summary: "Approval needed: record a command",
			Body:    fmt.Sprintf("%s asks to run and record “%s” in a terminal.", agentLabel(g.Agent), notifyText(strings.Join(g.Command, " "), 120)),
		}, g.State, true
	}
	return notice{}, "", false
}

func agentLabel(a AgentRef) string {
	if a.Name != "" {
		return "Agent “" + notifyText(a.Name, 60) + "”"
	}
	return "Agent " + notifyText(a.ID, 40)
}

// notifyText makes untrusted text safe for a notification: control
// characters (line breaks included), bidirectional controls and line or
// paragraph separators are shown as visible \uXXXX escapes (the same rule
// as the terminal consent prompt, so they are never live); the markup
// characters that notification servers interpret in the body are escaped
// as entities; and the text is cut to max characters with an ellipsis.
func notifyText(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n >= max {
			b.WriteString("…")
			break
		}
		n++
		switch {
		case unicode.IsControl(r) || isBidiControl(r) || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, "\\u%04x", r)
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isBidiControl reports the characters that reorder text around them
// (embeddings, overrides, isolates and marks).
func isBidiControl(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
}

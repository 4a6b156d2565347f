package capture

import (
	"fmt"
	"sync"
)

// Renderers keeps one renderer helper started ahead of the next capture,
// for a process that captures more than once (the desktop app, `gatehouse
// serve`): Node's start-up (most of a helper's start, ~100 ms of CPU) then
// happens while nothing waits for it, not between a capture's request and
// its launch. Each capture gets a helper of its own that no capture used
// before: the one started ahead, given a fresh terminal of the scenario's
// size (the helper's 'n' message, the same terminal a fresh start makes),
// and a new one is started ahead for the next capture. A helper started
// ahead that has failed or ended meanwhile is replaced by one started
// then (its hello owed after the launch, as without Renderers), so a
// capture whose renderer cannot start fails with the same error as
// without Renderers. Renderers is safe for concurrent use; Close ends the
// helper started ahead.
type Renderers struct {
	h      RendererHelper
	mu     sync.Mutex
	next   chan started // the helper being started ahead; nil once closed
	closed bool
}

// started is the outcome of one helper start.
type started struct {
	s   *screen
	err error
}

// aheadTerminal is the size helpers are started ahead with: the
// scenario's default.
var aheadTerminal = Terminal{Columns: 80, Rows: 24, Scrollback: 1000}

// NewRenderers starts one helper ahead, run as h says.
func NewRenderers(h RendererHelper) *Renderers {
	r := &Renderers{h: h}
	r.mu.Lock()
	r.startAhead()
	r.mu.Unlock()
	return r
}

// startAhead starts the next helper in the background (r.mu held).
func (r *Renderers) startAhead() {
	ch := make(chan started, 1)
	r.next = ch
	go func() {
		s, err := startScreen(r.h, aheadTerminal)
		ch <- started{s, err}
	}()
}

// screen returns a helper with a fresh terminal t, and starts the next
// one ahead: the one started ahead (its hello said), or one launched now
// (launchScreen: its hello still owed). A nil r launches one now with h.
func (r *Renderers) screen(h RendererHelper, t Terminal) (*screen, error) {
	if r == nil {
		return launchScreen(h, t)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("capture: the renderers were closed")
	}
	ch := r.next
	r.startAhead()
	r.mu.Unlock()
	got := <-ch
	if got.err == nil {
		// the helper answers a round trip after the reset, so one that ended
		// or broke while it waited is found before launch
		got.err = got.s.reset(t)
		if got.err == nil {
			_, got.err = got.s.stats()
		}
		if got.err != nil {
			got.s.close()
		}
	}
	if got.err != nil {
		return launchScreen(r.h, t)
	}
	return got.s, nil
}

// Close ends the helper started ahead (waiting for its start to finish);
// captures that use r afterwards fail before launch.
func (r *Renderers) Close() {
	r.mu.Lock()
	ch := r.next
	r.next, r.closed = nil, true
	r.mu.Unlock()
	if ch != nil {
		if got := <-ch; got.s != nil {
			got.s.close()
		}
	}
}

// screenStart is a renderer helper being started while the capture makes
// everything else of its launch ready (temporary root, PTY, shims,
// loopback, the "before" checkpoint). wait returns the helper once its
// process runs (or why it could not start: no pinned Node, no process),
// and the capture calls it before the target is launched; the helper's
// hello (Node's start-up, 60–140 ms) then comes while the target runs,
// its output queued for the screen meanwhile (launchScreen), and a
// helper that fails its hello fails the capture after the launch (see
// run). A screenStart is used by one goroutine; the helper is handed
// over through a channel.
type screenStart struct {
	ch   chan started
	got  started
	done bool
}

// start begins starting a helper with a fresh terminal t in the
// background (r.screen's helper: one started ahead when r is set, else
// one run with h).
func (r *Renderers) start(h RendererHelper, t Terminal) *screenStart {
	p := &screenStart{ch: make(chan started, 1)}
	go func() {
		s, err := r.screen(h, t)
		p.ch <- started{s, err}
	}()
	return p
}

// wait returns the started helper, or the error of its start.
func (p *screenStart) wait() (*screen, error) {
	if !p.done {
		p.got, p.done = <-p.ch, true
	}
	return p.got.s, p.got.err
}

// close ends the helper once its start has finished (for a capture that
// stopped before launch); closing a helper the capture already closed
// does nothing.
func (p *screenStart) close() {
	if s, _ := p.wait(); s != nil {
		s.close()
	}
}

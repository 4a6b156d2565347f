package app

import "sync"

// UIEvent is one named event for the UI (server-sent events in the
// browser, Wails events in the desktop window).
type UIEvent struct {
	Name string
	Data any
}

// hub fans UI events out to subscribers. A subscriber that falls behind
// loses events instead of stalling the app.
type hub struct {
	mu   sync.Mutex
	subs map[chan UIEvent]struct{}
}

func newHub() *hub { return &hub{subs: map[chan UIEvent]struct{}{}} }

func (h *hub) publish(name string, data any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- UIEvent{Name: name, Data: data}:
		default:
		}
	}
}

func (h *hub) subscribe(buffer int) (<-chan UIEvent, func()) {
	ch := make(chan UIEvent, buffer)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		if _, ok := h.subs[ch]; ok {
			delete(h.subs, ch)
			close(ch)
		}
		h.mu.Unlock()
	}
}

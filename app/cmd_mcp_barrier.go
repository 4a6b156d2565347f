package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"time"
)

// The delivery barrier of the stdio bridge. A host may handle the lines
// it reads out of order: the TypeScript SDK handles a notification in a
// later microtask but a response at once, so when a call's last progress
// notifications and its result arrive in one read, it answers the call
// first and then drops the progress it is told about "for an unknown
// token". Over HTTP every event is its own read, so that never happens.
// Before it writes the result of a call that had notifications, the
// bridge therefore pings the host (either side may ping in MCP) and
// writes the result only when the host has answered: a host answers a
// ping only after it has read, and in the TypeScript SDK handled, every
// line written before it. A host that does not answer within
// barrierWait gets the result anyway, and no further barrier (said once
// on stderr), so a host without pings is slowed once, never stalled; a
// host that has closed stdin gets it at once.

// barrierWait bounds how long a result waits for the host's answer.
const barrierWait = 5 * time.Second

// barrierPrefix starts the id of every ping the bridge sends itself; the
// app's own requests have numeric ids.
const barrierPrefix = "gatehouse-bridge-barrier-"

// barrierSet is the bridge's pings waiting for the host's answer.
type barrierSet struct {
	mu      sync.Mutex
	seq     int
	waiting map[string]chan struct{}
	off     bool          // the host did not answer once: no more barriers
	wait    time.Duration // barrierWait unless a test shortens it
}

// open registers a new ping; it returns its id and the channel closed
// when the host answers, or ok=false when barriers are off.
func (s *barrierSet) open() (id string, answered <-chan struct{}, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off {
		return "", nil, false
	}
	s.seq++
	id = fmt.Sprintf("%s%d", barrierPrefix, s.seq)
	ch := make(chan struct{})
	if s.waiting == nil {
		s.waiting = map[string]chan struct{}{}
	}
	s.waiting[id] = ch
	return id, ch, true
}

// answered reports whether raw (a response's id) is one of the bridge's
// own pings, and releases its waiter. A late answer to a ping that timed
// out is still the bridge's own and is kept from the app.
func (s *barrierSet) answered(raw json.RawMessage) bool {
	var id string
	if json.Unmarshal(bytes.TrimSpace(raw), &id) != nil || len(id) <= len(barrierPrefix) || id[:len(barrierPrefix)] != barrierPrefix {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.waiting[id]; ok {
		close(ch)
		delete(s.waiting, id)
	}
	return true
}

// abandon forgets a ping that was not answered in time and turns
// barriers off.
func (s *barrierSet) abandon(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting, id)
	s.off = true
}

func (s *barrierSet) timeout() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wait > 0 {
		return s.wait
	}
	return barrierWait
}

// barrier pings the host and waits (at most the barrier timeout) until it
// has answered, so every line written before is handled.
func (b *mcpBridge) barrier() {
	id, answered, ok := b.barriers.open()
	if !ok {
		return
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "ping"})
	b.write(msg)
	t := time.NewTimer(b.barriers.timeout())
	defer t.Stop()
	select {
	case <-answered:
	case <-b.ctx.Done():
	case <-b.hostDone:
		// The host closed its end: it reads what is left but answers
		// nothing, so holding the result would only delay the end.
		b.barriers.abandon(id)
	case <-t.C:
		b.barriers.abandon(id)
		fmt.Fprintf(b.errw, "gatehouse mcp: the host did not answer a ping within %v; results are no longer held until the host has handled the progress notifications before them\n", b.barriers.timeout())
	}
}

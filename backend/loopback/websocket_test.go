package loopback

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestServerWebSocketScripts: a real WebSocket client against static
// scripts: the connection route's message is sent on opening, a matched
// client message is answered by its replies, a client message of exactly
// limits.protocol_body_bytes is received and one byte more closes the
// connection as limit_exhausted; client messages are observed as the
// placeholder only.
func TestServerWebSocketScripts(t *testing.T) {
	const limit = 8
	conn, _ := json.Marshal(map[string]any{"path": "/ws", "messages": []any{map[string]any{"delay_ms": 0, "data": "hello"}}})
	msg, _ := json.Marshal(map[string]any{"path": "/ws", "body": "ping", "replies": []any{map[string]any{"delay_ms": 0, "data": "pong"}}})
	l := newTestServer(t, Replay{WebsocketConnections: []json.RawMessage{conn}, WebsocketMessages: []json.RawMessage{msg}},
		Limits{Connections: 10, ProtocolBodyBytes: limit})
	exhausted := make(chan struct{})
	stop, done := collectUntil(l, ReplayOutcomeLimitExhausted, exhausted)
	l.Serve(time.Now())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://127.0.0.1:"+strconv.Itoa(l.Port())+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	read := func() string {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := read(); got != "hello" {
		t.Fatalf("first message %q", got)
	}
	c.Write(ctx, websocket.MessageText, []byte("ping"))
	if got := read(); got != "pong" {
		t.Fatalf("reply %q", got)
	}
	c.Write(ctx, websocket.MessageText, []byte(strings.Repeat("x", limit)))   // at the limit: unmatched, kept open
	c.Write(ctx, websocket.MessageText, []byte(strings.Repeat("x", limit+1))) // one past: closed
	if _, _, err := c.Read(ctx); err == nil {
		t.Fatal("the connection stayed open after a message past the limit")
	}
	select { // the server observes the message past the limit after the client sees the close
	case <-exhausted:
	case <-ctx.Done():
		t.Fatal("no limit_exhausted observation")
	}
	rest := l.Stop()
	close(stop)
	var lines []string
	for _, o := range append(<-done, rest...) {
		if o.Protocol != "" {
			lines = append(lines, obsLine(o))
		}
	}
	want := []string{
		"websocket request GET /ws [] matched",
		"websocket response GET /ws [] 101",
		"websocket sent /ws [hello] sent",
		"websocket received /ws [<redacted-request-body>] matched",
		"websocket sent /ws [pong] sent",
		"websocket received /ws [<redacted-request-body>] unmatched",
		"websocket received /ws [<redacted-request-body>] limit_exhausted",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("observations:\n%q\nwant\n%q", lines, want)
	}
}

package loopback

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServerBodyLimit: a request body of exactly limits.protocol_body_bytes
// is served; one byte more is answered 413 and observed as
// limit_exhausted with a truncating problem, its bytes never counted.
func TestServerBodyLimit(t *testing.T) {
	const limit = 16
	route, _ := json.Marshal(map[string]any{"method": "POST", "path": "/up", "max_calls": 10})
	l := newTestServer(t, Replay{HTTP: []json.RawMessage{route}}, Limits{Connections: 10, ProtocolBodyBytes: limit})
	stop, done := collect(l)
	l.Serve(time.Now())
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	base := "http://127.0.0.1:" + strconv.Itoa(l.Port())
	for _, c := range []struct {
		n      int
		status int
	}{{limit, 200}, {limit + 1, 413}} {
		resp, err := client.Post(base+"/up", "text/plain", strings.NewReader(strings.Repeat("x", c.n)))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("a body of %d bytes: status %d, want %d", c.n, resp.StatusCode, c.status)
		}
	}
	l.Stop()
	close(stop)
	got := <-done
	if len(got) != 4 {
		t.Fatalf("%d observations: %v", len(got), got)
	}
	if o := got[0]; o.Outcome != ReplayOutcomeMatched || o.BodyBytes != limit || o.Data != RedactedRequestBody || o.Truncate {
		t.Errorf("at the limit: %+v", o)
	}
	o := got[2]
	if o.Outcome != ReplayOutcomeLimitExhausted || o.BodyBytes != 0 || o.Data != RedactedRequestBody || !o.Truncate ||
		!strings.Contains(o.Problem, "exceeded limits.protocol_body_bytes (16 bytes); it was answered 413") {
		t.Errorf("one past the limit: %+v", o)
	}
	if o := got[3]; o.Outcome != "413" || o.Direction != DirectionResponse {
		t.Errorf("answer past the limit: %+v", o)
	}
}

// TestServerConnectionLimit: limits.connections connections are served;
// the next one is closed unanswered, and Stop returns the truncating
// problem once.
func TestServerConnectionLimit(t *testing.T) {
	const limit = 2
	route, _ := json.Marshal(map[string]any{"method": "GET", "path": "/", "max_calls": 10})
	l := newTestServer(t, Replay{HTTP: []json.RawMessage{route}}, Limits{Connections: limit, ProtocolBodyBytes: 100})
	stop, done := collect(l)
	l.Serve(time.Now())
	addr := "127.0.0.1:" + strconv.Itoa(l.Port())
	get := func() (string, error) {
		c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
		if err != nil {
			return "", err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
			return "", err
		}
		b, err := io.ReadAll(c)
		return string(b), err
	}
	for i := range limit + 2 {
		answer, _ := get()
		served := strings.HasPrefix(answer, "HTTP/1.1 200 ")
		if served != (i < limit) {
			t.Errorf("connection %d (limit %d): answered %q", i+1, limit, answer)
		}
	}
	rest := l.Stop()
	close(stop)
	if n := len(<-done); n != 2*limit {
		t.Errorf("%d observations of served exchanges, want %d", n, 2*limit)
	}
	problems := 0
	for _, o := range rest {
		if o.Truncate && strings.Contains(o.Problem, "connections exceeded limits.connections (2)") {
			problems++
		}
	}
	if problems != 1 {
		t.Errorf("%d connection-limit problems in %v, want 1", problems, rest)
	}
}

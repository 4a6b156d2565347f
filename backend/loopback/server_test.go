package loopback

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// planJSON decodes replay plans in tests as the capture scenario does.
var planJSON = strictjson.Options{MaxDepth: 256, Surrogates: true, ExactNumbers: true, KeepDuplicates: true}

// newTestServer parses r and starts listening (not serving) for it; the
// server is stopped at the end of the test.
func newTestServer(tb testing.TB, r Replay, lim Limits) *Server {
	tb.Helper()
	if r.Machine == nil {
		r.Machine = json.RawMessage("null")
	}
	p, issues := ParsePlan(r, planJSON)
	if len(issues) > 0 {
		tb.Fatalf("plan: %v", issues)
	}
	l, err := New(Config{Plan: p, Limits: lim})
	if err != nil {
		tb.Fatal(err)
	}
	if l == nil {
		tb.Fatal("no server for a non-empty plan")
	}
	tb.Cleanup(func() { l.Stop() })
	return l
}

// collect acknowledges every observation of l until stop is closed and
// returns them on done.
func collect(l *Server) (stop chan struct{}, done chan []*Observation) {
	return collectUntil(l, "", nil)
}

// collectUntil is collect that also closes seen once an observation
// with outcome has been recorded.
func collectUntil(l *Server, outcome string, seen chan struct{}) (stop chan struct{}, done chan []*Observation) {
	stop, done = make(chan struct{}), make(chan []*Observation, 1)
	go func() {
		var got []*Observation
		for {
			select {
			case o := <-l.Observations():
				got = append(got, o)
				o.Recorded()
				if seen != nil && o.Outcome == outcome {
					close(seen)
					seen = nil
				}
			case <-stop:
				done <- got
				return
			}
		}
	}()
	return stop, done
}

func obsLine(o *Observation) string {
	if o.Protocol == "" {
		return "note: " + o.Problem
	}
	s := o.Protocol + " " + o.Direction
	if o.Method != nil {
		s += " " + *o.Method
	}
	if o.Path != nil {
		s += " " + *o.Path
	}
	return s + " [" + o.Data + "] " + o.Outcome
}

// TestServerStaticHTTP: a real HTTP client against static scripts: a
// matched route answers its response, a second call past max_calls is
// exhausted (409), an unknown path unmatched (404), a request body is
// recorded as the placeholder only; every exchange is observed before it
// is answered; after Stop the port refuses connections.
func TestServerStaticHTTP(t *testing.T) {
	route, _ := json.Marshal(map[string]any{"method": "POST", "path": "/a", "response": map[string]any{"status": 201, "body": "made"}})
	l := newTestServer(t, Replay{HTTP: []json.RawMessage{route}}, Limits{Connections: 10, ProtocolBodyBytes: 1000})
	env := l.Environ([]string{"A=1", "GATEHOUSE_REPLAY_HTTP_URL=http://elsewhere", "Z=2"})
	base := "http://127.0.0.1:" + strconv.Itoa(l.Port())
	if want := []string{"A=1", "GATEHOUSE_REPLAY_HTTP_URL=" + base, "GATEHOUSE_REPLAY_WEBSOCKET_URL=ws://127.0.0.1:" + strconv.Itoa(l.Port()), "Z=2"}; !slices.Equal(env, want) {
		t.Fatalf("environ %q", env)
	}
	stop, done := collect(l)
	l.Serve(time.Now())
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	for _, c := range []struct {
		method, path, body string
		status             int
		answer             string
	}{
		{"POST", "/a", "secret", 201, "made"},
		{"POST", "/a", "", 409, "gatehouse replay: every matching route is exhausted\n"},
		{"GET", "/b?x=1", "", 404, "gatehouse replay: no route matches this request\n"},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || string(b) != c.answer {
			t.Errorf("%s %s: %d %q", c.method, c.path, resp.StatusCode, b)
		}
	}
	rest := l.Stop()
	close(stop)
	var lines []string
	for _, o := range append(<-done, rest...) {
		lines = append(lines, obsLine(o))
	}
	want := []string{
		"http request POST /a [<redacted-request-body>] matched",
		"http response POST /a [made] 201",
		"http request POST /a [] exhausted",
		"http response POST /a [gatehouse replay: every matching route is exhausted\n] 409",
		"http request GET /b?x=1 [] unmatched",
		"http response GET /b?x=1 [gatehouse replay: no route matches this request\n] 404",
		"note: loopback replay: the server was shut down at the end of the capture, and its port refused a connection afterwards",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("observations:\n%q\nwant\n%q", lines, want)
	}
	if p := l.ShutdownProblems(); len(p) != 0 {
		t.Errorf("shutdown problems %q", p)
	}
	if c, err := net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(l.Port()), time.Second); err == nil {
		c.Close()
		t.Fatal("the port still accepts connections after Stop")
	}
	if again := l.Stop(); again != nil {
		t.Errorf("a second Stop returned %d observations", len(again))
	}
}

// TestNilServerServesNothing: without replay every method is harmless.
func TestNilServerServesNothing(t *testing.T) {
	l, err := New(Config{Plan: &Plan{}})
	if l != nil || err != nil {
		t.Fatalf("empty plan: %v %v", l, err)
	}
	env := []string{"A=1"}
	l.Serve(time.Now())
	if got := l.Environ(env); !slices.Equal(got, env) || l.Notes() != nil || l.Redactor() != nil || l.Observations() != nil ||
		l.Stop() != nil || l.ShutdownProblems() != nil || l.Port() != 0 {
		t.Fatal("a nil server did something")
	}
}

// checkReplay runs Check on {"replay": replay}.
func checkReplay(replay string) (Replay, []strictjson.Issue) {
	var issues strictjson.Collector
	n := strictjson.Decode([]byte(`{"replay":`+replay+`}`), "$", planJSON, &issues)
	if n == nil {
		return Replay{}, issues.List
	}
	c := strictjson.Checker{Issues: &issues}
	m, _ := c.Object(n, "$", "replay")
	r := Check(&c, m)
	return r, issues.List
}

// FuzzReplayPlan: any replay object Check accepts is kept in a defaulted
// form that Check accepts again unchanged (a fixed point) and that
// ParsePlan can serve; ParsePlan of any hand-built script returns a plan
// or issues, never both or neither.
func FuzzReplayPlan(f *testing.F) {
	f.Add(`{"http":[{"method":"GET","path":"/a","response":{"status":201,"headers":{"X-A":"1"},"body":"b"},"delay_ms":5,"max_calls":2}]}`)
	f.Add(`{"http":[{"method":"POST","path":"/d","body":"x","disconnect":true}],"websocket_connections":[{"path":"/ws","messages":[{"delay_ms":0,"data":"hi"}],"disconnect_after_ms":10}],"websocket_messages":[{"path":"/ws","body":null,"replies":[{"delay_ms":1,"data":"r"}],"disconnect":true}]}`)
	f.Add(`{"machine":{"initial_state":"s","max_transitions":1,"states":[{"name":"s"},{"name":"e","terminal":true}],"transitions":[{"id":"t","from":"s","to":"e","max_uses":1,"trigger":{"protocol":"http","method":"GET","path":"/"},"actions":[{"type":"http_response","status":200,"body":""}]}]}}`)
	f.Add(`{"http":[{"method":"GET","path":"/","headers":{"Cookie":"x"}}]}`)
	f.Fuzz(func(t *testing.T, replay string) {
		if !utf8.ValidString(replay) {
			return // the scenario refuses invalid UTF-8 before decoding
		}
		// A hand-built Replay holding the input as a script or a machine
		// is parsed or refused with issues, never half-accepted.
		for _, hand := range []Replay{
			{Machine: json.RawMessage("null"), HTTP: []json.RawMessage{json.RawMessage(replay)}},
			{Machine: json.RawMessage("null"), WebsocketConnections: []json.RawMessage{json.RawMessage(replay)}},
			{Machine: json.RawMessage("null"), WebsocketMessages: []json.RawMessage{json.RawMessage(replay)}},
		} {
			if p, issues := ParsePlan(hand, planJSON); (p == nil) == (len(issues) == 0) {
				t.Fatalf("ParsePlan returned plan %v with issues %v", p, issues)
			}
		}
		r, issues := checkReplay(replay)
		if len(issues) > 0 {
			return
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, issues := checkReplay(string(again))
		if len(issues) > 0 {
			t.Fatalf("defaulted form %s rejected: %v", again, issues)
		}
		if b2, _ := json.Marshal(r2); string(b2) != string(again) {
			t.Fatalf("not a fixed point:\n%s\n%s", again, b2)
		}
		if _, issues := ParsePlan(r, planJSON); len(issues) > 0 {
			t.Fatalf("accepted plan cannot be served: %v", issues)
		}
	})
}

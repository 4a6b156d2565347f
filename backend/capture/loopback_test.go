package capture

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/loopback"
)

// Loopback replay with real clients in the PTY: curl for HTTP and Node
// with the ws package (frontend/node_modules) for WebSocket.

func lbNeedTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed", name)
	}
	return p
}

// lbWsModule is the absolute path of the ws package the frontend installs.
func lbWsModule(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../frontend/node_modules/ws")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p, "package.json")); err != nil {
		t.Skipf("the ws package is not installed in frontend/node_modules (npm ci): %v", err)
	}
	return p
}

func lbProtocolEvents(t *testing.T, rec *Record) []ProtocolEvent {
	t.Helper()
	out := make([]ProtocolEvent, len(rec.ProtocolEvents))
	for i, raw := range rec.ProtocolEvents {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func lbReplayTransitions(t *testing.T, rec *Record) []ReplayTransition {
	t.Helper()
	out := make([]ReplayTransition, len(rec.ReplayTransitions))
	for i, raw := range rec.ReplayTransitions {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// lbEventLine is a compact form of a protocol event for comparisons.
func lbEventLine(e ProtocolEvent) string {
	s := e.Protocol + " " + e.Direction
	if e.Method != nil {
		s += " " + *e.Method
	}
	if e.Path != nil {
		s += " " + *e.Path
	}
	if e.Data != "" {
		s += " [" + e.Data + "]"
	}
	return s + " " + e.Outcome
}

func lbEventLines(events []ProtocolEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = lbEventLine(e)
	}
	return out
}

// lbJournalPos is the capture order of collection[index].
func lbJournalPos(t *testing.T, rec *Record, collection string, index int) int {
	t.Helper()
	for _, e := range rec.EventJournal {
		if e.Collection == collection && e.Index == index {
			return e.CaptureOrder
		}
	}
	t.Fatalf("%s[%d] is not in the journal", collection, index)
	return -1
}

// lbFrameWith is the index of the raw frame that completes the first
// occurrence of s in the output.
func lbFrameWith(t *testing.T, rec *Record, s string) int {
	t.Helper()
	var b strings.Builder
	for i, f := range rec.Frames {
		b.WriteString(f.Data)
		if strings.Contains(b.String(), s) {
			return i
		}
	}
	t.Fatalf("output never shows %q:\n%s", s, output(rec))
	return -1
}

func lbWantLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("protocol events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLoopbackStaticHTTPWithCurl(t *testing.T) {
	lbNeedTool(t, "curl")
	script := `u="$GATEHOUSE_REPLAY_HTTP_URL"
c() { curl -sS --max-time 5 -w ' %{http_code}\n' "$@"; }
c "$u/hello"
c "$u/hello"
c "$u/nothing?x=1"
c -X POST --data 'password=hunter2' "$u/login"
c "$u/slow"
c "$u/drop"; echo "drop:$?"
echo "url:$u"
`
	sc, opts := shScenario(t, script, func(m obj) {
		m["replay"] = obj{"http": []any{
			obj{"method": "GET", "path": "/hello", "response": obj{"body": "hi", "headers": obj{"X-Replay": "1"}}},
			obj{"method": "POST", "path": "/login", "body": "password=hunter2", "response": obj{"status": 201, "body": "welcome"}},
			obj{"method": "GET", "path": "/slow", "delay_ms": 300, "response": obj{"body": "late"}},
			obj{"method": "GET", "path": "/drop", "disconnect": true},
		}}
	})
	rec := capture(t, sc, opts)
	out := output(rec)
	for _, want := range []string{"hi 200", "gatehouse replay: every matching route is exhausted\n 409", "no route matches this request\n 404", "welcome 201", "late 200", "drop:52", "url:http://127.0.0.1:<port>"} {
		if !strings.Contains(strings.ReplaceAll(out, "\r\n", "\n"), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	ev := lbProtocolEvents(t, rec)
	lbWantLines(t, lbEventLines(ev), []string{
		"http request GET /hello matched",
		"http response GET /hello [hi] 200",
		"http request GET /hello exhausted",
		"http response GET /hello [" + exhaustedBody + "] 409",
		"http request GET /nothing?x=1 unmatched",
		"http response GET /nothing?x=1 [" + unmatchedBody + "] 404",
		"http request POST /login [<redacted-request-body>] matched",
		"http response POST /login [welcome] 201",
		"http request GET /slow matched",
		"http response GET /slow [late] 200",
		"http request GET /drop matched",
		"http response GET /drop disconnected",
	})
	if d := ev[9].AtMS - ev[8].AtMS; d < 290 {
		t.Errorf("the delayed response came %d ms after its request", d)
	}
	if b, _ := json.Marshal(rec.ProtocolEvents); strings.Contains(string(b)+out, "hunter2") {
		t.Error("the protocol events hold a request body")
	}
	// Journal order: each answer is recorded before the output it causes.
	for _, c := range []struct {
		event int
		text  string
	}{{1, "hi 200"}, {3, " 409"}, {7, "welcome 201"}, {9, "late 200"}, {11, "drop:"}} {
		if e, f := lbJournalPos(t, rec, "protocol_events", c.event), lbJournalPos(t, rec, "frames", lbFrameWith(t, rec, c.text)); e > f {
			t.Errorf("protocol event %d (capture order %d) is journaled after the output %q it caused (%d)", c.event, e, c.text, f)
		}
	}
	if len(rec.ReplayTransitions) != 0 || rec.Truncated {
		t.Errorf("transitions %d, truncated %v (%v)", len(rec.ReplayTransitions), rec.Truncated, rec.Limitations)
	}
	if !strings.Contains(strings.Join(rec.Limitations, "\n"), "refused a connection afterwards") {
		t.Errorf("shutdown not verified: %v", rec.Limitations)
	}
}

const lbWsClient = `const WebSocket = require(process.argv[2]);
const base = process.env.GATEHOUSE_REPLAY_WEBSOCKET_URL;
const log = (s) => process.stdout.write(s + "\n");
function conn(path, onOpen) {
  return new Promise((resolve) => {
    const ws = new WebSocket(base + path);
    ws.on("unexpected-response", (req, res) => { log(path + " refused " + res.statusCode); req.destroy(); resolve(); });
    ws.on("error", (e) => { if (!/Unexpected server response/.test(e.message)) log(path + " error " + e.message); });
    ws.on("open", () => { log(path + " open"); if (onOpen) onOpen(ws); });
    ws.on("message", (d) => {
      log(path + " got " + d);
      if (ws.onReply) ws.onReply(String(d));
    });
    ws.on("close", (code) => { log(path + " closed " + code); resolve(); });
  });
}
(async () => {
  await conn("/feed");
  await conn("/chat", (ws) => {
    // After the pong, three messages replay does not answer, then a close.
    ws.onReply = () => { ws.onReply = null; for (const m of ["nope", "ping", "secret-message"]) ws.send(m); ws.close(1000); };
    ws.send("ping");
  });
  await conn("/nothing");
  await conn("/feed");
  log("done");
})();
`

func TestLoopbackStaticWebSocketWithNode(t *testing.T) {
	node := lbNeedTool(t, "node")
	ws := lbWsModule(t)
	dir := t.TempDir()
	client := filepath.Join(dir, "client.js")
	if err := os.WriteFile(client, []byte(lbWsClient), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, opts := shScenario(t, "exec "+node+" "+client+" "+ws, func(m obj) {
		m["timeout_ms"] = 15000
		m["replay"] = obj{
			"websocket_connections": []any{
				obj{"path": "/feed", "messages": []any{obj{"delay_ms": 0, "data": "hello"}, obj{"delay_ms": 200, "data": "later"}}, "disconnect_after_ms": 300},
				obj{"path": "/chat"},
			},
			"websocket_messages": []any{
				obj{"path": "/chat", "body": "ping", "replies": []any{obj{"delay_ms": 50, "data": "pong"}}},
			},
		}
	})
	rec := capture(t, sc, opts)
	if rec.Exit.Reason != ExitReasonExited {
		t.Errorf("exit %+v", rec.Exit)
	}
	out := strings.ReplaceAll(output(rec), "\r\n", "\n")
	want := "/feed open\n/feed got hello\n/feed got later\n/feed closed 1000\n/chat open\n/chat got pong\n/chat closed 1000\n/nothing refused 404\n/feed refused 409\ndone\n"
	if !strings.Contains(out, want) {
		t.Errorf("client saw:\n%s\nwant:\n%s", out, want)
	}
	ev := lbProtocolEvents(t, rec)
	// The server records the client's close of /chat after the close
	// handshake, which races the client's next connection: only its order
	// within /chat is causal, so it is checked apart from the rest.
	lines := lbEventLines(ev)
	const chatClosed = "websocket received /chat closed"
	closedAt := slices.Index(lines, chatClosed)
	if lastChat := slices.Index(lines, "websocket received /chat [<redacted-request-body>] exhausted") + 1; closedAt <= lastChat {
		t.Fatalf("the close of /chat at %d, not after its last message at %d:\n%s", closedAt, lastChat, strings.Join(lines, "\n"))
	}
	lines = slices.Delete(lines, closedAt, closedAt+1)
	lbWantLines(t, lines, []string{
		"websocket request GET /feed matched",
		"websocket response GET /feed 101",
		"websocket sent /feed [hello] sent",
		"websocket sent /feed [later] sent",
		"websocket sent /feed disconnected",
		"websocket request GET /chat matched",
		"websocket response GET /chat 101",
		"websocket received /chat [<redacted-request-body>] matched",
		"websocket sent /chat [pong] sent",
		"websocket received /chat [<redacted-request-body>] unmatched",
		"websocket received /chat [<redacted-request-body>] exhausted",
		"websocket received /chat [<redacted-request-body>] unmatched",
		"websocket request GET /nothing unmatched",
		"websocket response GET /nothing 404",
		"websocket request GET /feed exhausted",
		"websocket response GET /feed 409",
	})
	if d := ev[3].AtMS - ev[1].AtMS; d < 190 {
		t.Errorf("the delayed message came %d ms after the connection opened", d)
	}
	if d := ev[4].AtMS - ev[1].AtMS; d < 290 {
		t.Errorf("the disconnect came %d ms after the connection opened", d)
	}
	if b, _ := json.Marshal(rec.ProtocolEvents); strings.Contains(string(b), "secret-message") || strings.Contains(string(b), "ping") {
		t.Error("the protocol events hold a client message")
	}
	for _, c := range []struct {
		event int
		text  string
	}{{2, "/feed got hello"}, {4, "/feed closed"}, {8, "/chat got pong"}, {14, "/nothing refused"}} {
		if e, f := lbJournalPos(t, rec, "protocol_events", c.event), lbJournalPos(t, rec, "frames", lbFrameWith(t, rec, c.text)); e > f {
			t.Errorf("protocol event %d (capture order %d) is journaled after the output %q it caused (%d)", c.event, e, c.text, f)
		}
	}
}

// lbLoginMachine answers POST /login by capturing the Authorization header
// as the sensitive alias TOKEN, serves GET /me only with that header,
// opens a WebSocket feed, and ends at POST /logout.
func lbLoginMachine() obj {
	http := func(id, from, to, method, path string, status int, body string, extra obj) obj {
		t := obj{"id": id, "from": from, "to": to, "max_uses": 1,
			"trigger": obj{"protocol": "http", "method": method, "path": path},
			"actions": []any{obj{"type": "http_response", "status": status, "body": body}}}
		for k, v := range extra {
			t[k] = v
		}
		return t
	}
	guard := []any{obj{"variable": "TOKEN", "value": obj{"source": "request_header", "name": "authorization"}}}
	return obj{"initial_state": "anonymous", "max_transitions": 20,
		"states": []any{obj{"name": "anonymous"}, obj{"name": "signed_in"}, obj{"name": "subscribed"}, obj{"name": "signed_out", "terminal": true}},
		"transitions": []any{
			http("login", "anonymous", "signed_in", "POST", "/login", 200, `{"ok":true}`, obj{
				"captures": []any{obj{"variable": "TOKEN", "value": obj{"source": "request_header", "name": "authorization"}, "sensitive": true}}}),
			http("me", "signed_in", "signed_in", "GET", "/me", 200, "you", obj{"guards": guard, "max_uses": 2}),
			obj{"id": "feed", "from": "signed_in", "to": "signed_in", "max_uses": 1,
				"trigger": obj{"protocol": "websocket_connect", "path": "/feed"},
				"actions": []any{obj{"type": "websocket_send", "data": "welcome"}}},
			obj{"id": "subscribe", "from": "signed_in", "to": "subscribed", "max_uses": 1,
				"trigger": obj{"protocol": "websocket_message", "path": "/feed", "body": `{"op":"sub"}`},
				"actions": []any{obj{"type": "delay", "duration_ms": 100}, obj{"type": "websocket_send", "data": "subscribed"}, obj{"type": "disconnect"}}},
			http("logout", "subscribed", "signed_out", "POST", "/logout", 200, "bye", obj{"guards": guard}),
		}}
}

const lbMachineClient = `const WebSocket = require(process.argv[2]);
const ws = new WebSocket(process.env.GATEHOUSE_REPLAY_WEBSOCKET_URL + "/feed");
ws.on("message", (d) => { console.log("feed got " + d); if (String(d) === "welcome") ws.send('{"op":"sub"}'); });
ws.on("close", (code) => { console.log("feed closed " + code); });
`

// lbFeedCommand is the shell command that runs lbMachineClient under
// node; the test is skipped without curl, node or the ws module.
func lbFeedCommand(t *testing.T) string {
	t.Helper()
	lbNeedTool(t, "curl")
	node := lbNeedTool(t, "node")
	ws := lbWsModule(t)
	client := filepath.Join(t.TempDir(), "feed.js")
	if err := os.WriteFile(client, []byte(lbMachineClient), 0o600); err != nil {
		t.Fatal(err)
	}
	return node + " " + client + " " + ws
}

func TestLoopbackMachineLoginFlow(t *testing.T) {
	feed := lbFeedCommand(t)
	// The token is assembled at run time, so only the target ever holds it.
	script := `u="$GATEHOUSE_REPLAY_HTTP_URL"
tok="s3cr3t"; tok="Bearer $tok-t0ken-value"
c() { curl -sS --max-time 5 -w ' %{http_code}\n' "$@"; }
c "$u/me"
c -X POST -H "Authorization: $tok" --data '{"user":"ada"}' "$u/login"
c -H 'Authorization: Bearer wrong' "$u/me"
c -H "Authorization: $tok" "$u/me"
echo "the client holds: $tok"
` + feed + `
c -X POST -H "Authorization: $tok" "$u/logout"
c -X POST -H "Authorization: $tok" "$u/logout"
c "$u/missing"
`
	sc, opts := shScenario(t, script, func(m obj) {
		m["timeout_ms"] = 15000
		m["replay"] = obj{"machine": lbLoginMachine()}
	})
	rec := capture(t, sc, opts)
	out := strings.ReplaceAll(output(rec), "\r\n", "\n")
	for _, want := range []string{refusedBody + " 409", `{"ok":true} 200`, "you 200", "the client holds: <secret:TOKEN>", "feed got welcome\nfeed got subscribed\nfeed closed 1000", "bye 200", unmatchedBody + " 404"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b, _ := json.Marshal(rec)
	if strings.Contains(string(b), "s3cr3t-t0ken-value") {
		t.Errorf("the record holds the captured secret")
	}
	if b, _ := json.Marshal(rec.ProtocolEvents); strings.Contains(string(b), "user") {
		t.Errorf("the protocol events hold a request body")
	}
	ev := lbProtocolEvents(t, rec)
	lbWantLines(t, lbEventLines(ev), []string{
		"http request GET /me invalid_state",
		"http response GET /me [" + refusedBody + "] 409",
		"http request POST /login [<redacted-request-body>] committed",
		`http response POST /login [{"ok":true}] 200`,
		"http request GET /me guard_failed",
		"http response GET /me [" + refusedBody + "] 409",
		"http request GET /me committed",
		"http response GET /me [you] 200",
		"websocket request GET /feed committed",
		"websocket response GET /feed 101",
		"websocket sent /feed [welcome] sent",
		"websocket received /feed [<redacted-request-body>] committed",
		"websocket sent /feed [subscribed] sent",
		"websocket sent /feed disconnected",
		"http request POST /logout committed",
		"http response POST /logout [bye] 200",
		"http request POST /logout invalid_state",
		"http response POST /logout [" + refusedBody + "] 409",
		"http request GET /missing unmatched",
		"http response GET /missing [" + unmatchedBody + "] 404",
	})
	tr := lbReplayTransitions(t, rec)
	var got []string
	for _, x := range tr {
		got = append(got, x.TransitionID+" "+x.StateBefore+"->"+x.StateAfter+" "+strings.Join(x.SensitiveAliases, ","))
	}
	want := []string{"login anonymous->signed_in TOKEN", "me signed_in->signed_in ", "feed signed_in->signed_in ", "subscribe signed_in->subscribed ", "logout subscribed->signed_out "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("transitions:\n%s", strings.Join(got, "\n"))
	}
	// Each transition is journaled right after the event that committed it.
	k := 0
	for i, e := range ev {
		if e.Outcome != "committed" {
			continue
		}
		if p, q := lbJournalPos(t, rec, "protocol_events", i), lbJournalPos(t, rec, "replay_transitions", k); q != p+1 {
			t.Errorf("transition %d at capture order %d, its event %d at %d", k, q, i, p)
		}
		k++
	}
}

// Limits are enforced at exactly their value: at the limit nothing is
// truncated, one past it the capture is truncated and replay goes on.
func TestLoopbackLimits(t *testing.T) {
	lbNeedTool(t, "curl")
	sup := newSupervisor(t)
	run := func(t *testing.T, script string, limits obj, replay obj) (*Record, string) {
		t.Helper()
		sc, opts := shScenario(t, `u="$GATEHOUSE_REPLAY_HTTP_URL"
c() { curl -sS --max-time 5 -w ' %{http_code}\n' "$@"; echo "rc:$?"; }
`+script, func(m obj) {
			m["limits"] = limits
			m["replay"] = replay
		})
		rec, err := Capture(context.Background(), sup, sc, opts)
		if err != nil {
			t.Fatal(err)
		}
		checkRecord(t, rec, opts)
		return rec, strings.ReplaceAll(output(rec), "\r\n", "\n")
	}
	static := obj{"http": []any{
		obj{"method": "GET", "path": "/a", "max_calls": 10, "response": obj{"body": "0123456789"}},
		obj{"method": "POST", "path": "/b", "max_calls": 10, "response": obj{"body": ""}},
	}}
	truncatedBy := func(t *testing.T, rec *Record, want bool, limit string) {
		t.Helper()
		if rec.Truncated != want || want != strings.Contains(strings.Join(rec.Limitations, "\n"), limit) {
			t.Errorf("truncated %v (want %v by %s): %v", rec.Truncated, want, limit, rec.Limitations)
		}
	}
	t.Run("protocol_events", func(t *testing.T) {
		rec, out := run(t, `c "$u/a"; c "$u/a"`, obj{"protocol_events": 4}, static)
		truncatedBy(t, rec, false, "limits.protocol_events")
		if len(rec.ProtocolEvents) != 4 {
			t.Errorf("%d events", len(rec.ProtocolEvents))
		}
		rec, out = run(t, `c "$u/a"; c "$u/a"`, obj{"protocol_events": 3}, static)
		truncatedBy(t, rec, true, "limits.protocol_events")
		if len(rec.ProtocolEvents) != 3 || strings.Count(out, "0123456789 200") != 2 {
			t.Errorf("%d events; output %q", len(rec.ProtocolEvents), out)
		}
	})
	t.Run("protocol_body_bytes", func(t *testing.T) {
		// 10 response bytes, then a 10-byte request body: 20 in all.
		rec, out := run(t, `c "$u/a"; c -X POST --data 0123456789 "$u/b"`, obj{"protocol_body_bytes": 20}, static)
		truncatedBy(t, rec, false, "limits.protocol_body_bytes")
		rec, out = run(t, `c "$u/a"; c -X POST --data 0123456789 "$u/b"`, obj{"protocol_body_bytes": 19}, static)
		truncatedBy(t, rec, true, "limits.protocol_body_bytes")
		if !strings.Contains(out, " 200\nrc:0\n 200\nrc:0") {
			t.Errorf("replay did not go on: %q", out)
		}
		// A single body past the limit is not read: 413.
		rec, out = run(t, `c -X POST --data 01234567890 "$u/b"`, obj{"protocol_body_bytes": 10}, static)
		truncatedBy(t, rec, true, "limits.protocol_body_bytes")
		if ev := lbProtocolEvents(t, rec); !strings.Contains(out, " 413") || len(ev) == 0 || ev[0].Outcome != loopback.ReplayOutcomeLimitExhausted {
			t.Errorf("events %v; output %q", lbEventLines(ev), out)
		}
	})
	t.Run("connections", func(t *testing.T) {
		rec, _ := run(t, `c "$u/a"; c "$u/a"`, obj{"connections": 2}, static)
		truncatedBy(t, rec, false, "limits.connections")
		rec, out := run(t, `c "$u/a"; c "$u/a"; c "$u/a"`, obj{"connections": 2}, static)
		truncatedBy(t, rec, true, "limits.connections")
		if strings.Count(out, "0123456789 200") != 2 || !strings.Contains(out, " 000\nrc:5") { // curl: 52 empty reply or 56 reset
			t.Errorf("the third connection was answered: %q", out)
		}
	})
	t.Run("replay_transitions", func(t *testing.T) {
		loop := obj{"initial_state": "s", "max_transitions": 100,
			"states": []any{obj{"name": "s"}, obj{"name": "end", "terminal": true}},
			"transitions": []any{
				obj{"id": "again", "from": "s", "to": "s", "max_uses": 100, "trigger": obj{"protocol": "http", "method": "GET", "path": "/a"},
					"actions": []any{obj{"type": "http_response", "status": 200, "body": "a"}}},
				obj{"id": "stop", "from": "s", "to": "end", "max_uses": 1, "trigger": obj{"protocol": "http", "method": "GET", "path": "/stop"},
					"actions": []any{obj{"type": "http_response", "status": 200, "body": ""}}},
			}}
		rec, _ := run(t, `c "$u/a"; c "$u/a"`, obj{"protocol_events": 4}, obj{"machine": loop})
		truncatedBy(t, rec, false, "limits.protocol_events")
		if len(rec.ReplayTransitions) != 2 {
			t.Errorf("%d transitions", len(rec.ReplayTransitions))
		}
		rec, out := run(t, `c "$u/a"; c "$u/a"; c "$u/a"`, obj{"protocol_events": 2}, obj{"machine": loop})
		truncatedBy(t, rec, true, "replay transitions exceeded limits.protocol_events")
		if len(rec.ReplayTransitions) != 2 || len(rec.ProtocolEvents) != 2 || strings.Count(out, "a 200") != 3 {
			t.Errorf("%d transitions, %d events; output %q", len(rec.ReplayTransitions), len(rec.ProtocolEvents), out)
		}
	})
}

// Cancelling a capture while a delayed answer is pending still shuts the
// server down: Capture returns promptly and the port refuses connections.
func TestLoopbackCancellationClosesTheServer(t *testing.T) {
	lbNeedTool(t, "curl")
	sc, opts := shScenario(t, `echo "$GATEHOUSE_REPLAY_HTTP_URL" > url.txt; exec curl -sS "$GATEHOUSE_REPLAY_HTTP_URL/slow"`, func(m obj) {
		m["replay"] = obj{"http": []any{obj{"method": "GET", "path": "/slow", "delay_ms": 60000}}}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	urlFile := filepath.Join(sc.WorkingDirectory, "url.txt")
	go func() {
		for range 200 {
			if b, err := os.ReadFile(urlFile); err == nil && strings.HasSuffix(string(b), "\n") {
				time.Sleep(300 * time.Millisecond) // curl is waiting for /slow
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	began := time.Now()
	rec, err := Capture(ctx, newSupervisor(t), sc, opts)
	if rec != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("record %v, error %v", rec != nil, err)
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Errorf("cancellation took %v", d)
	}
	b, err := os.ReadFile(urlFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(strings.TrimSpace(string(b)), "http://")
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("replay URL %q", b)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections", addr)
	}
}

// A WebSocket the target keeps open past timeout_ms is closed with the
// server, and the shutdown is still verified.
func TestLoopbackTimeoutWithOpenWebSocket(t *testing.T) {
	node := lbNeedTool(t, "node")
	ws := lbWsModule(t)
	client := filepath.Join(t.TempDir(), "hold.js")
	hold := `const WebSocket = require(process.argv[2]);
const ws = new WebSocket(process.env.GATEHOUSE_REPLAY_WEBSOCKET_URL + "/hold");
ws.on("message", (d) => console.log("got " + d));
setInterval(() => {}, 1000);
`
	if err := os.WriteFile(client, []byte(hold), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, opts := shScenario(t, "exec "+node+" "+client+" "+ws, func(m obj) {
		m["timeout_ms"] = 1500
		m["replay"] = obj{"websocket_connections": []any{obj{"path": "/hold", "messages": []any{obj{"delay_ms": 0, "data": "held"}}}}}
	})
	rec := capture(t, sc, opts)
	if rec.Exit.Reason != ExitReasonTimeout || !strings.Contains(output(rec), "got held") {
		t.Fatalf("exit %+v, output %q", rec.Exit, output(rec))
	}
	lines := lbEventLines(lbProtocolEvents(t, rec))
	if len(lines) < 3 || lines[2] != "websocket sent /hold [held] sent" {
		t.Fatalf("events %v", lines)
	}
	if !strings.Contains(strings.Join(rec.Limitations, "\n"), "refused a connection afterwards") {
		t.Errorf("shutdown not verified: %v", rec.Limitations)
	}
}

// The bodies the replay server answers with on its own (backend/loopback),
// pinned here as the record shows them.
const (
	unmatchedBody = "gatehouse replay: no route matches this request\n"
	exhaustedBody = "gatehouse replay: every matching route is exhausted\n"
	refusedBody   = "gatehouse replay: the replay machine refused this request\n"
)

package compare

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/evidence"
)

// wsClient is a Node program that opens two WebSocket connections to the
// loopback replay server (/a, then /b), starts one HTTP request (path),
// and then does talk: ping on a connection and wait for its pong, or wait
// for the HTTP answer, in the order given. It prints one line at the end.
func wsClient(path, talk string) string {
	return `const ws = process.env.GATEHOUSE_REPLAY_WEBSOCKET_URL, web = process.env.GATEHOUSE_REPLAY_HTTP_URL;
const open = (p) => new Promise((ok, fail) => { const w = new WebSocket(ws + p); w.onopen = () => ok(w); w.onerror = fail; });
const ping = (w) => new Promise((ok) => { w.onmessage = (e) => ok(e.data); w.send('ping'); });
const close = (w) => new Promise((ok) => { w.onclose = ok; w.close(); });
const a = await open('/a');
const b = await open('/b');
const x = fetch(web + '` + path + `').then((r) => r.text());
` + talk + `
await close(a);
await close(b);
console.log('talked');
`
}

// TestBehaviorProtocolOfRealCapturesUnderLoad captures, under CPU load, a
// program talking over two WebSocket connections and one HTTP exchange
// whose events interleave differently in the two runs (the pings in the
// other order, the HTTP answer before or after them): behavior compares
// unchanged (exact changed); with the HTTP path changed in one run only
// the protocol is changed and the first divergence is that request.
// GATEHOUSE_SOAK=1 repeats it 20 times.
func TestBehaviorProtocolOfRealCapturesUnderLoad(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	sup, reps := underLoad(t)

	conn := func(p string) map[string]any {
		return map[string]any{"path": p, "messages": []any{}, "disconnect_after_ms": nil, "max_calls": 1}
	}
	pong := func(p string) map[string]any {
		return map[string]any{"path": p, "body": "ping", "replies": []any{map[string]any{"delay_ms": 0, "data": "pong " + p}}, "max_calls": 1}
	}
	route := func(p string) map[string]any {
		return map[string]any{"method": "GET", "path": p, "delay_ms": 600, "response": map[string]any{"body": "hi"}}
	}
	bc := behaviorCase{name: "loopback-websocket", script: "node --no-warnings --experimental-websocket client.mjs\necho done\n",
		edit: func(m map[string]any, _ string) {
			m["replay"] = map[string]any{"http": []any{route("/x"), route("/y")},
				"websocket_connections": []any{conn("/a"), conn("/b")}, "websocket_messages": []any{pong("/a"), pong("/b")}}
		}}
	workdir, root := t.TempDir(), t.TempDir()
	take := func(client string) (e *evidence.Envelope, events []string) {
		if err := os.WriteFile(filepath.Join(workdir, "client.mjs"), []byte(client), 0o644); err != nil {
			t.Fatal(err)
		}
		env, rec := sampledCapture(t, sup, workdir, root, bc, bc.script)
		for _, ev := range rec.ProtocolEvents {
			events = append(events, string(ev))
		}
		return env, events
	}
	for rep := range reps {
		a, ea := take(wsClient("/x", "await ping(a); await ping(b); await x;"))
		b, eb := take(wsClient("/x", "await x; await ping(b); await ping(a);"))
		if len(ea) != 12 || len(eb) != 12 {
			t.Fatalf("rep %d: %d and %d protocol events, want 12 each (5 per WebSocket connection, 2 for the exchange):\n%s\n%s", rep, len(ea), len(eb), strings.Join(ea, "\n"), strings.Join(eb, "\n"))
		}
		ex := mustCompare(t, a, b, Options{Mode: ModeExact})
		if ex.Protocol != Changed {
			t.Fatalf("rep %d: exact protocol %s: the two runs' events must interleave differently:\n%s\n%s", rep, ex.Protocol, strings.Join(ea, "\n"), strings.Join(eb, "\n"))
		}
		res := mustCompare(t, a, b, Options{DiffLimit: 20})
		if res.Status != Unchanged {
			t.Fatalf("rep %d: behavior %s: %+v\nfirst divergence %s\n%s\n%s", rep, res.Status, res.DimensionViews(), fmtJSON(res.FirstDivergence), strings.Join(ea, "\n"), strings.Join(eb, "\n"))
		}

		c, _ := take(wsClient("/y", "await ping(a); await ping(b); await x;"))
		res = mustCompare(t, a, c, Options{DiffLimit: 20})
		for _, v := range res.DimensionViews() {
			want := Unchanged
			if v.Name == "protocol" {
				want = Changed
			}
			if v.Status != want {
				t.Fatalf("rep %d: HTTP path changed: %s is %s, want %s\n%s", rep, v.Name, v.Status, want, fmtJSON(res.FirstDivergence))
			}
		}
		fd := res.FirstDivergence
		l, _ := fd.Left.(map[string]any)
		r, _ := fd.Right.(map[string]any)
		if fd.Dimension != "protocol" || l["path"] != "/x" || r["path"] != "/y" || l["direction"] != "request" || fmtJSON(res.DivergenceFields) != `["path"]` {
			t.Fatalf("rep %d: first divergence %s fields %v, want the HTTP request's path /x → /y", rep, fmtJSON(fd), res.DivergenceFields)
		}
	}
}

package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// testServer starts browser mode in-process on a free loopback port.
type testServer struct {
	base   string // http://127.0.0.1:PORT
	token  string
	facade *Facade
	mcp    *mcpService
	srv    *server
	// closeWindow ends the stand-in for an open app page that the Go tests
	// start with (they decide through the facade, as the page would).
	closeWindow func()
	cancel      context.CancelFunc
	done        chan struct{}
}

func startServer(t testing.TB) *testServer {
	t.Helper()
	return startServerWith(t, consentWindow{})
}

// startServerWith starts the server with a consent clock of the test's
// choosing (a fake clock makes expiry testable without waiting).
func startServerWith(t testing.TB, window consentWindow) *testServer {
	t.Helper()
	var out, errb strings.Builder
	dataDir := filepath.Join(t.TempDir(), "data")
	io := IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "GATEHOUSE_DATA_DIR" {
			return dataDir
		}
		return os.Getenv(k)
	}}
	ln, err := listenLoopback("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	env, err := openEnv(context.Background(), io)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newFacade(env, "browser", window)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(f, ln.Addr())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{base: "http://" + ln.Addr().String(), token: srv.token, facade: f, mcp: srv.mcp, srv: srv, closeWindow: srv.mcp.windows.open(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(ts.done)
		serveUntil(ctx, ln, srv)
	}()
	t.Cleanup(func() {
		cancel()
		<-ts.done
		f.close()
		env.Close()
	})
	return ts
}

type req struct {
	method, path, body  string
	host, origin, token string
	cookie              bool
}

func (ts *testServer) do(t *testing.T, r req) (int, map[string]any) {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, _ := http.NewRequest(r.method, ts.base+r.path, body)
	if r.host != "" {
		hr.Host = r.host
	}
	if r.origin != "" {
		hr.Header.Set("Origin", r.origin)
	}
	if r.token != "" {
		hr.Header.Set("Authorization", "Bearer "+r.token)
	}
	if r.cookie { // the token as the old session cookie: must authorize nothing
		hr.AddCookie(&http.Cookie{Name: "gatehouse_session", Value: ts.token})
	}
	resp, err := http.DefaultTransport.RoundTrip(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func (ts *testServer) origin() string { return ts.base }

// Every refused request leaves the policy exactly as it was.
func TestLocalAPIGuardRefusesWithoutStateChange(t *testing.T) {
	ts := startServer(t)
	host := strings.TrimPrefix(ts.base, "http://")
	set := `{"policy":{"mode":"blocked","safeMode":true,"trusted":[]}}`
	policyNow := func() string {
		_, m := ts.do(t, req{method: "POST", path: "/api/GetPolicy", body: "{}", origin: ts.origin(), token: ts.token})
		b, _ := json.Marshal(m)
		return string(b)
	}
	before := policyNow()
	for name, c := range map[string]struct {
		r      req
		status int
		code   string
	}{
		"no token":             {req{method: "POST", path: "/api/SetPolicy", body: set, origin: ts.origin()}, 401, "unauthenticated"},
		"wrong token":          {req{method: "POST", path: "/api/SetPolicy", body: set, origin: ts.origin(), token: strings.Repeat("0", 64)}, 403, "forbidden"},
		"wrong Host":           {req{method: "POST", path: "/api/SetPolicy", body: set, origin: ts.origin(), token: ts.token, host: "attacker.example:80"}, 403, "bad_host"},
		"rebinding Host":       {req{method: "POST", path: "/api/SetPolicy", body: set, origin: "http://attacker.example", token: ts.token, host: "attacker.example:" + strings.Split(host, ":")[1]}, 403, "bad_host"},
		"foreign Origin":       {req{method: "POST", path: "/api/SetPolicy", body: set, origin: "http://attacker.example", token: ts.token}, 403, "bad_origin"},
		"no Origin":            {req{method: "POST", path: "/api/SetPolicy", body: set, token: ts.token}, 403, "bad_origin"},
		"null Origin":          {req{method: "POST", path: "/api/SetPolicy", body: set, origin: "null", token: ts.token}, 403, "bad_origin"},
		"wrong token in URL":   {req{method: "GET", path: "/?token=nope"}, 403, "forbidden"},
		"events without token": {req{method: "GET", path: "/api/events"}, 401, "unauthenticated"},
		"list without token":   {req{method: "GET", path: "/api/"}, 401, "unauthenticated"},
		"token as a cookie":    {req{method: "POST", path: "/api/SetPolicy", body: set, origin: ts.origin(), cookie: true}, 401, "unauthenticated"},
	} {
		status, m := ts.do(t, c.r)
		if status != c.status || m["code"] != c.code {
			t.Errorf("%s: %d %v", name, status, m)
		}
	}
	if after := policyNow(); after != before {
		t.Fatalf("a refused request changed the policy:\n%s\n%s", before, after)
	}
	// The same request with everything right goes through.
	if status, m := ts.do(t, req{method: "POST", path: "/api/SetPolicy", body: set, origin: ts.origin(), token: ts.token}); status != 200 || m["mode"] != "blocked" {
		t.Fatalf("authorized request: %d %v", status, m)
	}
}

// TestOpeningURLSetsNoCookie: the opening URL gives the page and sets no
// cookie at all (a cookie would reach every server on 127.0.0.1).
func TestOpeningURLSetsNoCookie(t *testing.T) {
	ts := startServer(t)
	hr, _ := http.NewRequest("GET", ts.base+"/?token="+ts.token, nil)
	resp, err := http.DefaultTransport.RoundTrip(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(resp.Header.Values("Set-Cookie")) != 0 {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
}

func TestListenIsLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "192.0.2.1:0", "localhost:0", "example.com:80"} {
		if ln, err := listenLoopback(addr); err == nil {
			ln.Close()
			t.Errorf("%s accepted", addr)
		}
	}
	ln, err := listenLoopback("[::1]:0")
	if err == nil {
		ln.Close()
	}
}

// The browser bridge, the Wails binding (every exported method of
// *Facade) and the frontend's typed client list the same methods.
func TestBridgeWailsAndClientExposeTheSameMethods(t *testing.T) {
	b, err := newBridge(&Facade{})
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	ft := reflect.TypeOf(&Facade{})
	for i := 0; i < ft.NumMethod(); i++ {
		exported = append(exported, ft.Method(i).Name)
	}
	if strings.Join(b.names(), ",") != strings.Join(exported, ",") {
		t.Fatalf("bridge %v vs exported %v", b.names(), exported)
	}
	docs, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| ([A-Z][A-Za-z]+) \|`).FindAllStringSubmatch(string(docs), -1) {
		documented[m[1]] = true
	}
	for _, n := range exported {
		if !documented[n] {
			t.Errorf("%s is not in docs/api.md", n)
		}
		delete(documented, n)
	}
	for n := range documented {
		t.Errorf("docs/api.md lists %s, which the facade lacks", n)
	}
	client, err := os.ReadFile("../frontend/src/api/client.ts")
	if err != nil {
		t.Skip("frontend client not present yet")
	}
	m := regexp.MustCompile(`(?s)METHODS\s*=\s*\[(.*?)\]`).FindSubmatch(client)
	if m == nil {
		t.Fatal("frontend/src/api/client.ts has no METHODS list")
	}
	var listed []string
	for _, q := range regexp.MustCompile(`'([A-Za-z]+)'|"([A-Za-z]+)"`).FindAllStringSubmatch(string(m[1]), -1) {
		listed = append(listed, q[1]+q[2])
	}
	got := map[string]bool{}
	for _, n := range listed {
		got[n] = true
	}
	for _, n := range exported {
		if !got[n] {
			t.Errorf("frontend client lacks %s", n)
		}
	}
	if len(listed) != len(exported) {
		t.Errorf("frontend client lists %d methods, facade has %d", len(listed), len(exported))
	}
}

// A run started through the API raises a proposal event; approving it
// over the API runs the script and records the envelope.
func TestStartRunApproveOverTheAPI(t *testing.T) {
	ts := startServer(t)
	hr, _ := http.NewRequest("GET", ts.base+"/api/events", nil)
	hr.Header.Set("Authorization", "Bearer "+ts.token)
	resp, err := http.DefaultTransport.RoundTrip(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan [2]string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if n, ok := strings.CutPrefix(line, "event: "); ok {
				name = n
			} else if d, ok := strings.CutPrefix(line, "data: "); ok {
				events <- [2]string{name, d}
			}
		}
		close(events)
	}()
	call := func(method, body string) map[string]any {
		status, m := ts.do(t, req{method: "POST", path: "/api/" + method, body: body, origin: ts.origin(), token: ts.token})
		if status != 200 {
			t.Fatalf("%s: %d %v", method, status, m)
		}
		return m
	}
	ws := t.TempDir()
	call("StartRun", fmt.Sprintf(`{"skill":"text-metrics","input":"{\"text\":\"one two three\"}","workspace":%q}`, ws))
	var proposal map[string]any
	var completed map[string]any
	timeout := time.After(30 * time.Second)
	for completed == nil {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("event stream ended")
			}
			var d map[string]any
			json.Unmarshal([]byte(e[1]), &d)
			switch {
			case e[0] == "proposal" && d["type"] == "raised":
				proposal = d["proposal"].(map[string]any)
				if !strings.Contains(proposal["invocation"].(string), `"text": "one two three"`) || !strings.HasPrefix(proposal["revision"].(string), "sha256:") {
					t.Fatalf("proposal view %v", proposal)
				}
				pending := call("PendingProposals", "{}")["proposals"].([]any)
				if len(pending) != 1 {
					t.Fatalf("pending %v", pending)
				}
				call("Decide", fmt.Sprintf(`{"proposalId":%q,"approve":true}`, proposal["id"]))
				if status, m := ts.do(t, req{method: "POST", path: "/api/Decide", body: fmt.Sprintf(`{"proposalId":%q,"approve":false}`, proposal["id"]), origin: ts.origin(), token: ts.token}); status == 200 {
					t.Fatalf("second decision accepted: %v", m)
				}
			case e[0] == "run" && d["type"] == "completed":
				completed = d
			}
		case <-timeout:
			t.Fatal("no completion")
		}
	}
	if proposal == nil {
		t.Fatal("no proposal event")
	}
	runs := call("ListRuns", "{}")["runs"].([]any)
	first := runs[0].(map[string]any)
	env := first["envelope"].(map[string]any)
	if first["status"] != "succeeded" || env["output"].(map[string]any)["words"].(float64) != 3 {
		t.Fatalf("run %v", first)
	}
	journal := call("RunEvents", fmt.Sprintf(`{"attemptId":%q}`, first["attempt_id"]))["events"].([]any)
	if len(journal) != 9 {
		t.Fatalf("journal has %d events", len(journal))
	}
	if status, m := ts.do(t, req{method: "POST", path: "/api/InspectSkill", body: `{"name":"text-metrics","extra":1}`, origin: ts.origin(), token: ts.token}); status != 400 || m["code"] != "invalid_arguments" {
		t.Fatalf("unknown argument field: %d %v", status, m)
	}
}

func resolveForTest(p string) (string, error) { return filepath.EvalSymlinks(p) }

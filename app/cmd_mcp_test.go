package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// bridgeRun is one `gatehouse mcp` run in-process against a server at url.
type bridgeRun struct {
	in     *io.PipeWriter
	out    *bufio.Scanner
	stderr *syncBuf
	done   chan error
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// wantEnd waits (up to 20 s) for the bridge to end with an error saying
// want; a bridge still running then fails the test, which names the
// situation in why ("with a refused token").
func (br *bridgeRun) wantEnd(t *testing.T, want, why string) {
	t.Helper()
	select {
	case err := <-br.done:
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("bridge ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the bridge kept running " + why)
	}
}

func startBridge(t *testing.T, url, token string) *bridgeRun {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, runtimeFileName), []byte(fmt.Sprintf(`{"url":%q,"pid":1}`, url)), 0o600); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	br := &bridgeRun{in: inW, out: bufio.NewScanner(outR), stderr: &syncBuf{}, done: make(chan error, 1)}
	br.out.Buffer(make([]byte, 1<<20), 1<<24)
	env := map[string]string{"GATEHOUSE_DATA_DIR": dir, "GATEHOUSE_AGENT_TOKEN": token, "HOME": dir}
	go func() {
		err := runMCP(context.Background(), IO{Stdin: inR, Stdout: outW, Stderr: br.stderr, Getenv: func(k string) string { return env[k] }}, nil)
		outW.Close()
		br.done <- err
	}()
	t.Cleanup(func() { inW.Close() })
	return br
}

func (br *bridgeRun) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(br.in, line+"\n"); err != nil {
		t.Fatalf("write to the bridge: %v", err)
	}
}

// next reads the bridge's next message (20 s at most).
func (br *bridgeRun) next(t *testing.T) map[string]any {
	t.Helper()
	got := make(chan map[string]any, 1)
	go func() {
		if !br.out.Scan() {
			got <- nil
			return
		}
		var m map[string]any
		json.Unmarshal(br.out.Bytes(), &m)
		got <- m
	}()
	select {
	case m := <-got:
		if m == nil {
			t.Fatalf("the bridge ended; stderr: %s", br.stderr.String())
		}
		return m
	case <-time.After(20 * time.Second):
		t.Fatalf("no message from the bridge; stderr: %s", br.stderr.String())
	}
	return nil
}

const bridgeInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`

// The bridge never dies silently: a malformed line gets -32700, an
// unknown method an error for that request, an unknown notification is
// dropped, and the bridge answers the next ping each time.
func TestBridgeSurvivesBadMessages(t *testing.T) {
	ts := startServer(t)
	_, tok := addAgent(t, ts, "bridge-host")
	br := startBridge(t, ts.base, tok)
	br.send(t, bridgeInit)
	if m := br.next(t); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	br.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ping := func(id int) {
		t.Helper()
		br.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
		if m := br.next(t); m["id"] != float64(id) || m["result"] == nil {
			t.Fatalf("ping %d: %v", id, m)
		}
	}
	ping(2)
	br.send(t, `{"jsonrpc":"2.0","id":3,"method":"tasks/list"}`)
	if m := br.next(t); m["id"] != float64(3) || m["error"] == nil {
		t.Fatalf("unknown method: %v", m)
	}
	ping(4)
	br.send(t, `{"jsonrpc":"2.0","method":"notifications/unheard_of"}`)
	ping(5)
	br.send(t, `{"jsonrpc":"2.0","id":6,"method":`)
	if m := br.next(t); m["error"] == nil || m["error"].(map[string]any)["code"] != float64(-32700) {
		t.Fatalf("malformed line: %v", m)
	}
	ping(7)
	br.send(t, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"list_skills","arguments":{}}}`)
	if m := br.next(t); m["id"] != float64(8) || m["result"] == nil {
		t.Fatalf("a tool call after bad messages: %v", m)
	}
	br.in.Close()
	if err := <-br.done; err != nil {
		t.Fatalf("the bridge ended with %v after stdin closed", err)
	}
}

// A refused token: the request is answered, the reason is on stderr and
// the bridge exits non-zero.
func TestBridgeBadTokenReported(t *testing.T) {
	ts := startServer(t)
	br := startBridge(t, ts.base, "gha_"+strings.Repeat("A", 43))
	br.send(t, bridgeInit)
	if m := br.next(t); m["id"] != float64(1) || m["error"] == nil {
		t.Fatalf("initialize with a bad token: %v", m)
	}
	br.wantEnd(t, "refused the agent token", "with a refused token")
}

// An app that goes away: the waiting request is answered with an error,
// the reason is reported and the bridge exits non-zero.
func TestBridgeAppGoneReported(t *testing.T) {
	ts := startServer(t)
	_, tok := addAgent(t, ts, "bridge-orphan")
	br := startBridge(t, ts.base, tok)
	br.send(t, bridgeInit)
	br.next(t)
	br.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	br.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if m := br.next(t); m["id"] != float64(2) || m["result"] == nil { // the notification was delivered before it
		t.Fatalf("ping: %v", m)
	}
	ts.cancel() // the app stops
	<-ts.done
	go io.WriteString(br.in, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n") // the bridge may have ended: never block on it
	// The ping is answered with an error, unless the bridge noticed the
	// app was gone earlier (on its event stream) and ended first.
	if br.out.Scan() {
		var m map[string]any
		json.Unmarshal(br.out.Bytes(), &m)
		if m["id"] != float64(3) || m["error"] == nil {
			t.Fatalf("ping to a stopped app: %v", m)
		}
	}
	br.wantEnd(t, "not answering", "without its app")
}

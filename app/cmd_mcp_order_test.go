package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// runSkillLine is a tools/call run_skill line with a progress token.
func runSkillLine(t *testing.T, id int) string {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"name": "text-metrics", "input": map[string]any{"text": "one two three"}, "workspace": t.TempDir()})
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"progressToken":"tok%d"},"name":"run_skill","arguments":%s}}`, id, id, args)
}

// Through the stdio bridge, every progress notification of a run_skill
// call is handled by the host before that call's result reaches it: the
// bridge writes the run's lifecycle steps up to "cleaned", then pings the
// host, and holds the result until the host has answered (a TypeScript
// SDK host handles a notification after a response read at the same
// time, and drops it). The test host answers each ping late and checks
// that nothing of the call came in the meantime.
func TestBridgeProgressBeforeResult(t *testing.T) {
	ts := startServer(t)
	ts.mcp.limits.KeepAlive = 50 * time.Millisecond
	agentID, tok := addAgent(t, ts, "bridge-order")
	br := startBridge(t, ts.base, tok)
	br.send(t, bridgeInit)
	br.next(t)
	br.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := 0; i < 3; i++ {
		id := 10 + i
		br.send(t, runSkillLine(t, id))
		p := pendingProposal(t, ts, agentID)
		ts.facade.Decide(DecideArgs{ProposalID: p.ID, Approve: true})
		var notes []string
		pinged := false
		for {
			m := br.next(t)
			if m["method"] == "notifications/progress" {
				params := m["params"].(map[string]any)
				if pinged || params["progressToken"] != fmt.Sprintf("tok%d", id) {
					t.Fatalf("progress after the barrier, or for another token: %v", m)
				}
				notes = append(notes, params["message"].(string))
				continue
			}
			if m["method"] == "ping" {
				pid, _ := m["id"].(string)
				if pinged || !strings.HasPrefix(pid, barrierPrefix) {
					t.Fatalf("unexpected ping: %v", m)
				}
				pinged = true
				// Nothing more of the call may arrive before the host answers.
				held := make(chan map[string]any, 1)
				go func() {
					if br.out.Scan() {
						var m map[string]any
						json.Unmarshal(br.out.Bytes(), &m)
						held <- m
					}
					close(held)
				}()
				select {
				case m := <-held:
					t.Fatalf("written before the host answered the barrier ping: %v", m)
				case <-time.After(300 * time.Millisecond):
				}
				br.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"result":{}}`, pid))
				m = <-held
				if m == nil {
					t.Fatalf("the bridge ended; stderr: %s", br.stderr.String())
				}
			}
			if m["id"] != float64(id) || m["result"] == nil {
				t.Fatalf("call %d: unexpected message %v", id, m)
			}
			break
		}
		if !pinged {
			t.Fatalf("call %d: the result was written without a barrier after %d notifications", id, len(notes))
		}
		joined := strings.Join(notes, "\n")
		for _, step := range []string{"proposed: ", "decided: approved", "staged", "spawned", "exited", "cleaned"} {
			if !strings.Contains(joined, step) {
				t.Fatalf("call %d: %q did not arrive before the result; before it:\n%s", id, step, joined)
			}
		}
	}
	if strings.Contains(br.stderr.String(), "did not answer") {
		t.Fatalf("stderr: %s", br.stderr.String())
	}
}

// A host that never answers pings gets the result anyway after the
// barrier's wait, is told once on stderr, and is not held again; a call
// without notifications (list_skills) is never held.
func TestBridgeBarrierHostWithoutPings(t *testing.T) {
	ts := startServer(t)
	agentID, tok := addAgent(t, ts, "bridge-noping")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	defer inW.Close()
	stderr := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &mcpBridge{url: ts.base + "/mcp", token: tok, out: outW, errw: stderr, client: &http.Client{}, ctx: ctx, stop: cancel}
	b.barriers.wait = 200 * time.Millisecond
	go func() { b.run(inR); outW.Close() }()
	br := &bridgeRun{in: inW, out: bufio.NewScanner(outR), stderr: stderr}
	br.out.Buffer(make([]byte, 1<<20), 1<<24)
	br.send(t, bridgeInit)
	br.next(t)
	br.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	br.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_skills","arguments":{}}}`)
	if m := br.next(t); m["id"] != float64(2) {
		t.Fatalf("list_skills: %v", m)
	}
	for i, id := range []int{3, 4} {
		br.send(t, runSkillLine(t, id))
		p := pendingProposal(t, ts, agentID)
		ts.facade.Decide(DecideArgs{ProposalID: p.ID, Approve: true})
		pings := 0
		for {
			m := br.next(t)
			if m["method"] == "ping" {
				pings++ // never answered
				continue
			}
			if m["id"] == float64(id) {
				break
			}
		}
		if want := 1 - i; pings != want {
			t.Fatalf("call %d: %d barrier pings, want %d", id, pings, want)
		}
	}
	if n := strings.Count(stderr.String(), "did not answer a ping"); n != 1 {
		t.Fatalf("stderr said it %d times: %s", n, stderr.String())
	}
}

// A host that closes its end (stdin) while the bridge holds a result for
// its answer to a barrier ping will not answer: the bridge writes the
// result at once and ends, without waiting out the barrier or saying the
// host "did not answer".
func TestBridgeBarrierEndsWhenTheHostCloses(t *testing.T) {
	ts := startServer(t)
	agentID, tok := addAgent(t, ts, "bridge-close")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &mcpBridge{url: ts.base + "/mcp", token: tok, out: outW, errw: stderr, client: &http.Client{}, ctx: ctx, stop: cancel}
	b.barriers.wait = time.Hour
	ended := make(chan struct{})
	go func() { b.run(inR); close(ended); outW.Close() }()
	br := &bridgeRun{in: inW, out: bufio.NewScanner(outR), stderr: stderr}
	br.out.Buffer(make([]byte, 1<<20), 1<<24)
	br.send(t, bridgeInit)
	br.next(t)
	br.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	br.send(t, runSkillLine(t, 2))
	p := pendingProposal(t, ts, agentID)
	ts.facade.Decide(DecideArgs{ProposalID: p.ID, Approve: true})
	for {
		if m := br.next(t); m["method"] == "ping" {
			break
		}
	}
	inW.Close()
	if m := br.next(t); m["id"] != float64(2) {
		t.Fatalf("after the host closed: %v", m)
	}
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the bridge did not end after the host closed")
	}
	if strings.Contains(stderr.String(), "did not answer") {
		t.Fatalf("stderr: %s", stderr.String())
	}
}

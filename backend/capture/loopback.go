package capture

// Loopback replay (docs/formats/capture-scenario.md, "Replay").
//
// A capture whose scenario has a replay machine or static scripts
// (loopback_plan.go) runs one HTTP and WebSocket server on 127.0.0.1 at a
// port the kernel picks. The target finds it in GATEHOUSE_REPLAY_HTTP_URL
// (http://127.0.0.1:PORT) and GATEHOUSE_REPLAY_WEBSOCKET_URL
// (ws://127.0.0.1:PORT); a request carrying "Upgrade: websocket" is a
// WebSocket connection, anything else an HTTP exchange. Nothing else is
// reachable through it: the server never forwards anything.
//
// Every exchange becomes protocol events, each handed to the recording
// loop and acknowledged before the server acts on it, so the event
// journal orders them before whatever the target does in reaction:
//
//	HTTP request      {protocol http, direction request, method, path, data: "<redacted-request-body>" or "", outcome}
//	HTTP response     {protocol http, direction response, method, path, data: body, outcome: status ("200") or "disconnected"}
//	WebSocket upgrade {protocol websocket, direction request, method GET, path, data "", outcome}
//	upgrade answer    {protocol websocket, direction response, method GET, path, data "", outcome: status ("101", "404", …)}
//	client message    {protocol websocket, direction received, method null, path, data: "<redacted-request-body>", outcome}
//	client close      {protocol websocket, direction received, method null, path, data "", outcome "closed"}
//	server message    {protocol websocket, direction sent, method null, path, data: message, outcome "sent"}
//	server close      {protocol websocket, direction sent, method null, path, data "", outcome "disconnected"}
//
// The outcome of a request or client message is how replay decided: with
// static scripts "matched", "unmatched" (answered 404) or "exhausted"
// (every matching route has used its max_calls; answered 409); with a
// machine the decision's outcome ("committed" or a refusal: "unmatched" is
// answered 404, every other refusal 409). A request body past
// limits.protocol_body_bytes is "limit_exhausted" (answered 413). A
// client message has no answer of its own: a refused one is recorded and
// otherwise ignored. Paths are the request target (path and query).
//
// A committed machine transition is recorded in replay_transitions right
// after the event that caused it. Recorded text is normalized and redacted
// like every other observation, and values a machine captured as
// sensitive are replaced by "<secret:ALIAS>" in everything recorded after
// the capture. Protocol events share limits.protocol_events with shim
// events, their bodies are bounded by limits.protocol_body_bytes, replay
// transitions by limits.protocol_events on their own, and TCP connections
// by limits.connections (later ones are closed at once); passing a limit
// truncates the capture while replay goes on. At the end of the capture
// the server is shut down, every connection closed, and the port verified
// to refuse connections.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/replay"
)

// Environment variables naming the loopback replay server.
const (
	ReplayHTTPURLVariable      = "GATEHOUSE_REPLAY_HTTP_URL"
	ReplayWebSocketURLVariable = "GATEHOUSE_REPLAY_WEBSOCKET_URL"
)

// RedactedRequestBody is the data recorded for every request body and
// client WebSocket message that is not empty.
const RedactedRequestBody = record.RedactedRequestBody

// Protocol event vocabulary.
const (
	ProtocolHTTP      = record.ProtocolHTTP
	ProtocolWebSocket = record.ProtocolWebSocket

	DirectionRequest  = record.DirectionRequest
	DirectionResponse = record.DirectionResponse
	DirectionReceived = record.DirectionReceived
	DirectionSent     = record.DirectionSent

	ReplayOutcomeMatched        = record.ReplayOutcomeMatched
	ReplayOutcomeUnmatched      = record.ReplayOutcomeUnmatched
	ReplayOutcomeExhausted      = record.ReplayOutcomeExhausted
	ReplayOutcomeLimitExhausted = record.ReplayOutcomeLimitExhausted
	ReplayOutcomeSent           = record.ReplayOutcomeSent
	ReplayOutcomeDisconnected   = record.ReplayOutcomeDisconnected
	ReplayOutcomeClosed         = record.ReplayOutcomeClosed
)

// Bodies of the answers replay gives on its own.
const (
	unmatchedBody = "gatehouse replay: no route matches this request\n"
	exhaustedBody = "gatehouse replay: every matching route is exhausted\n"
	refusedBody   = "gatehouse replay: the replay machine refused this request\n"
	tooLargeBody  = "gatehouse replay: the request body exceeds limits.protocol_body_bytes\n"
)

// loopbackStopTimeout bounds the wait for the server's goroutines at the
// end of a capture.
const loopbackStopTimeout = 5 * time.Second

// protoObs is one observation of the server for the recording loop: a
// protocol event (with the transition it committed), or a problem note.
type protoObs struct {
	at                  time.Duration
	protocol, direction string
	method, path        *string
	data, outcome       string
	bodyBytes           int  // bytes counted against limits.protocol_body_bytes
	planPath            bool // path is a plan path (it matched): redacted like the manifest, not normalized
	transition          *transitionObs
	problem             string // a limitation; with truncate, a passed limit
	truncate            bool
	ack                 chan struct{}
}

type transitionObs struct {
	id, before, after string
	sensitive         []string
}

// loopback is the replay server of one capture. Its methods accept a nil
// receiver (a scenario without replay).
type loopback struct {
	plan *replayPlan
	rt   *replay.Runtime
	// planText redacts plan text (transition ids, states, variables) as
	// manifest.scenario does, so recorded transitions match the manifest.
	planText func(string) string
	trans    map[string]*replay.Transition
	limits   Limits
	ln       net.Listener
	srv      *http.Server
	port     int
	start    time.Time

	obs    chan *protoObs // unbuffered: a send is a handover to the loop
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex // orders decisions and the emission of their events
	state    string     // the machine's state (under mu)
	httpUsed []int
	connUsed []int
	msgUsed  []int

	conns     atomic.Int64
	connLimit atomic.Bool
	seq       atomic.Int64

	restMu  sync.Mutex // guards rest, live and stopped
	rest    []*protoObs
	live    map[*wsConn]bool
	stopped bool

	once     sync.Once
	stopErr  error
	recorded loopbackRecording // touched by the recording loop only
}

// newLoopback parses the replay plan of sc and, when it has anything to
// serve, listens on 127.0.0.1:0; it returns nil for an empty plan.
func newLoopback(sc *Scenario) (*loopback, error) {
	plan, err := parseReplayPlan(sc.Replay)
	if err != nil {
		return nil, fmt.Errorf("capture: replay: %w", err)
	}
	if plan.empty() {
		return nil, nil
	}
	l := &loopback{
		plan: plan, planText: sc.Redactor(), limits: sc.Limits, obs: make(chan *protoObs), live: map[*wsConn]bool{},
		httpUsed: make([]int, len(plan.http)), connUsed: make([]int, len(plan.conns)), msgUsed: make([]int, len(plan.msgs)),
	}
	if m := plan.machine; m != nil {
		if l.rt, err = replay.NewRuntime(m); err != nil {
			return nil, fmt.Errorf("capture: replay: %w", err)
		}
		l.state = m.InitialState
		l.trans = make(map[string]*replay.Transition, len(m.Transitions))
		for i := range m.Transitions {
			l.trans[m.Transitions[i].ID] = &m.Transitions[i]
		}
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	if l.ln, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		l.cancel()
		return nil, fmt.Errorf("capture: replay: listen on 127.0.0.1: %w", err)
	}
	l.port = l.ln.Addr().(*net.TCPAddr).Port
	l.srv = &http.Server{
		Handler:           l,
		ReadHeaderTimeout: 10 * time.Second,
		ConnState:         l.connState,
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, "c"+strconv.FormatInt(l.seq.Add(1), 10))
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	return l, nil
}

type connKey struct{}

// environ sets the replay URLs in env (kept sorted by the caller's sort).
func (l *loopback) environ(env []string) []string {
	if l == nil {
		return env
	}
	host := "127.0.0.1:" + strconv.Itoa(l.port)
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if !strings.HasPrefix(kv, ReplayHTTPURLVariable+"=") && !strings.HasPrefix(kv, ReplayWebSocketURLVariable+"=") {
			out = append(out, kv)
		}
	}
	out = append(out, ReplayHTTPURLVariable+"=http://"+host, ReplayWebSocketURLVariable+"=ws://"+host)
	sort.Strings(out)
	return out
}

// serve starts answering; start is the session's time origin.
func (l *loopback) serve(start time.Time) {
	if l == nil {
		return
	}
	l.start = start
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.srv.Serve(l.ln) // returns http.ErrServerClosed at stop
	}()
}

// notes are the record's limitations about the replay of this capture.
func (l *loopback) notes() []string {
	if l == nil {
		return nil
	}
	notes := []string{"loopback replay: static scripts answered on 127.0.0.1 (HTTP/1.1 and WebSocket, no TLS); request bodies and client WebSocket messages are recorded as " + RedactedRequestBody + "; request and response headers are not recorded"}
	if l.rt != nil {
		notes[0] = strings.Replace(notes[0], "static scripts", "a replay machine", 1)
		notes = append(notes, "loopback replay: values the machine captured as sensitive are recorded as <secret:ALIAS> in every observation, also in those recorded before the capture, except where one raw terminal chunk ends inside the value")
	}
	return notes
}

// redactor returns the machine's redaction of captured sensitive values,
// or nil without a machine.
func (l *loopback) redactor() func(string) string {
	if l == nil || l.rt == nil {
		return nil
	}
	return l.rt.Redact
}

// observations is the channel of l's observations; nil (never ready in a
// select) without replay.
func loopbackObsOf(l *loopback) <-chan *protoObs {
	if l == nil {
		return nil
	}
	return l.obs
}

func (l *loopback) now() time.Duration { return time.Since(l.start) }

// emit hands o to the recording loop and waits until it is recorded; once
// the capture is stopping it keeps o for stop to return.
func (l *loopback) emit(o *protoObs) {
	o.at = l.now()
	o.ack = make(chan struct{})
	select {
	case l.obs <- o:
		select {
		case <-o.ack:
		case <-l.ctx.Done():
		}
	case <-l.ctx.Done():
		l.restMu.Lock()
		l.rest = append(l.rest, o)
		l.restMu.Unlock()
	}
}

// connState closes TCP connections past limits.connections.
func (l *loopback) connState(c net.Conn, st http.ConnState) {
	if st != http.StateNew {
		return
	}
	if l.conns.Add(1) > int64(l.limits.Connections) {
		c.Close()
		if !l.connLimit.Swap(true) {
			l.restMu.Lock()
			l.rest = append(l.rest, &protoObs{truncate: true, problem: fmt.Sprintf("loopback replay: connections exceeded limits.connections (%d); later connections were closed unanswered", l.limits.Connections)})
			l.restMu.Unlock()
		}
	}
}

// sleep waits d or until the capture stops; it reports whether d passed.
func (l *loopback) sleep(d time.Duration) bool {
	if d <= 0 {
		return l.ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.ctx.Done():
		return false
	}
}

func strp(s string) *string { return &s }

// requestData is the recorded data of a body: the placeholder, or "".
func requestData(n int) string {
	if n == 0 {
		return ""
	}
	return RedactedRequestBody
}

// enter registers a goroutine of the server with l.wg; it reports false
// once stop has begun (then the goroutine must not run).
func (l *loopback) enter() bool {
	l.restMu.Lock()
	defer l.restMu.Unlock()
	if l.stopped {
		return false
	}
	l.wg.Add(1)
	return true
}

// stop shuts the server down, closes every connection, waits for the
// goroutines and verifies the port refuses connections; it returns the
// observations not handed to the loop. It is idempotent; stopErr reports
// a shutdown that could not be verified.
func (l *loopback) stop() []*protoObs {
	if l == nil {
		return nil
	}
	var rest []*protoObs
	l.once.Do(func() {
		l.cancel()
		l.srv.Close() // the listener and every connection net/http still owns
		l.ln.Close()  // when Serve never ran
		l.restMu.Lock()
		l.stopped = true
		live := make([]*wsConn, 0, len(l.live))
		for c := range l.live {
			live = append(live, c)
		}
		l.restMu.Unlock()
		for _, c := range live {
			c.c.CloseNow() // hijacked WebSocket connections
		}
		done := make(chan struct{})
		go func() { l.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(loopbackStopTimeout):
			l.stopErr = fmt.Errorf("capture: replay: the loopback server's goroutines did not end within %v: %w", loopbackStopTimeout, ErrCleanupIncomplete)
		}
		if c, err := net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(l.port), time.Second); err == nil {
			c.Close()
			l.stopErr = errors.Join(l.stopErr, fmt.Errorf("capture: replay: 127.0.0.1:%d still accepts connections after shutdown: %w", l.port, ErrCleanupIncomplete))
		}
		l.restMu.Lock()
		rest, l.rest = l.rest, nil
		l.restMu.Unlock()
		note := "loopback replay: the server was shut down at the end of the capture, and its port refused a connection afterwards"
		if l.stopErr != nil {
			note = "loopback replay: the shutdown of the server could not be verified"
		}
		rest = append(rest, &protoObs{problem: note})
	})
	return rest
}

// err is the shutdown error of a stopped server (nil when verified).
func (l *loopback) err() error {
	if l == nil {
		return nil
	}
	return l.stopErr
}

// attach makes n redact the machine's sensitive captures and, with
// ports, normalize the server's port.
func (l *loopback) attach(n *normalizer, ports bool) {
	if l == nil {
		return
	}
	n.redact = l.redactor()
	if ports {
		n.addLoopbackPort(l.port)
	}
}

// claimRoute counts one call on the first static route that matches and
// still has calls left (used[i] below its max_calls) and returns it with
// outcome matched; with no such route it returns -1 and exhausted when
// some route matched, unmatched when none did. route(i) says whether
// route i matches and its max_calls. The caller holds the lock that
// guards used.
func claimRoute(used []int, route func(i int) (matches bool, maxCalls int)) (outcome string, index int) {
	outcome = ReplayOutcomeUnmatched
	for i := range used {
		matches, maxCalls := route(i)
		if !matches {
			continue
		}
		if used[i] < maxCalls {
			used[i]++
			return ReplayOutcomeMatched, i
		}
		outcome = ReplayOutcomeExhausted
	}
	return outcome, -1
}

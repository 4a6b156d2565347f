// Package loopback is the replay server of a process capture
// (docs/formats/capture-scenario.md, "Replay"): it validates the replay
// object of a scenario (plan.go) and answers the captured target over HTTP
// and WebSocket on 127.0.0.1 from that plan, handing every exchange to
// the capture's recording loop as an Observation. It never forwards
// anything and knows nothing of terminals or of the record: the capture
// engine (backend/capture) records what it is handed.
//
// A capture whose scenario has a replay machine or static scripts
// (plan.go) runs one HTTP and WebSocket server on 127.0.0.1 at a
// port the kernel picks. The target finds it in GATEHOUSE_REPLAY_HTTP_URL
// (http://127.0.0.1:PORT) and GATEHOUSE_REPLAY_WEBSOCKET_URL
// (ws://127.0.0.1:PORT); a request carrying "Upgrade: websocket" is a
// WebSocket connection, anything else an HTTP exchange. Nothing else is
// reachable through it: the server never forwards anything.
//
// Every exchange becomes protocol events, each handed to the recording
// loop (Server.Observations) and acknowledged (Observation.Recorded)
// before the server acts on it, so the event
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

package loopback

import (
	"context"
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

// stopTimeout bounds the wait for the server's goroutines at the end of a
// capture.
const stopTimeout = 5 * time.Second

// Observation is one observation of the server for the recording loop: a
// protocol event (with the transition it committed), or a note about the
// replay (Problem) with no Protocol. The server goroutine that handed it
// over waits until Recorded is called (or the capture stops).
type Observation struct {
	At                  time.Duration // since the start passed to Serve
	Protocol, Direction string        // empty Protocol: a note only
	Method, Path        *string       // the request's; Method is nil for WebSocket messages and closes
	Data, Outcome       string        // raw text, to be normalized and redacted by the recorder
	BodyBytes           int           // bytes counted against limits.protocol_body_bytes
	PlanPath            bool          // Path is a plan path (it matched): redact it like the manifest, do not normalize it
	Transition          *Transition   // the machine transition this event committed, or nil
	Problem             string        // a limitation of the capture; with Truncate, a passed limit
	Truncate            bool

	ack chan struct{}
}

// Recorded releases the server goroutine waiting for o to be recorded. It
// must be called once for every observation read from Observations; it
// does nothing for one returned by Stop.
func (o *Observation) Recorded() {
	if o.ack != nil {
		close(o.ack)
	}
}

// Transition is one committed transition of the replay machine, its plan
// text (ID, states, variable names) redacted by Config.PlanText. Sensitive
// names the variables captured as sensitive, never their values.
type Transition struct {
	ID, Before, After string
	Sensitive         []string
}

// Limits are the bounds of the scenario the server enforces while it
// serves (the recorder enforces the others).
type Limits struct {
	Connections       int // TCP connections; later ones are closed at once (limits.connections)
	ProtocolBodyBytes int // bytes of one request body or client WebSocket message (limits.protocol_body_bytes)
}

// Config is what New needs: a non-empty plan, the limits and the
// redaction of plan text.
type Config struct {
	Plan   *Plan
	Limits Limits
	// PlanText redacts plan text (transition ids, states, variables) as
	// the record's manifest does, so recorded transitions match it; nil
	// keeps plan text as it is.
	PlanText func(string) string
}

// Server is the replay server of one capture. Its methods accept a nil
// receiver, which serves nothing (a scenario without replay).
type Server struct {
	plan *Plan
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

	obs    chan *Observation // unbuffered: a send is a handover to the loop
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
	rest    []*Observation
	live    map[*wsConn]bool
	stopped bool

	once     sync.Once
	problems []string // why the shutdown could not be verified
}

// New listens on 127.0.0.1 at a port the kernel picks for the plan of
// cfg; it returns nil (which serves nothing) for an empty plan. Nothing is
// answered before Serve. Its errors carry no prefix of their own: the
// caller names the replay.
func New(cfg Config) (*Server, error) {
	plan := cfg.Plan
	if plan.Empty() {
		return nil, nil
	}
	planText := cfg.PlanText
	if planText == nil {
		planText = func(s string) string { return s }
	}
	l := &Server{
		plan: plan, planText: planText, limits: cfg.Limits, obs: make(chan *Observation), live: map[*wsConn]bool{},
		httpUsed: make([]int, len(plan.http)), connUsed: make([]int, len(plan.conns)), msgUsed: make([]int, len(plan.msgs)),
	}
	if m := plan.machine; m != nil {
		var err error
		if l.rt, err = replay.NewRuntime(m); err != nil {
			return nil, err
		}
		l.state = m.InitialState
		l.trans = make(map[string]*replay.Transition, len(m.Transitions))
		for i := range m.Transitions {
			l.trans[m.Transitions[i].ID] = &m.Transitions[i]
		}
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	var err error
	if l.ln, err = net.Listen("tcp4", "127.0.0.1:0"); err != nil {
		l.cancel()
		return nil, fmt.Errorf("listen on 127.0.0.1: %w", err)
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

// Environ returns env (a sorted list of NAME=value) with
// GATEHOUSE_REPLAY_HTTP_URL and GATEHOUSE_REPLAY_WEBSOCKET_URL set to the
// server, still sorted; a nil server returns env unchanged.
func (l *Server) Environ(env []string) []string {
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

// Serve starts answering; start is the capture's time origin, from which
// Observation.At is measured.
func (l *Server) Serve(start time.Time) {
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

// Notes are the record's limitations about the replay of this capture
// (nil without replay).
func (l *Server) Notes() []string {
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

// Redactor returns the machine's redaction of the values it captured as
// sensitive ("<secret:ALIAS>"), or nil without a machine.
func (l *Server) Redactor() func(string) string {
	if l == nil || l.rt == nil {
		return nil
	}
	return l.rt.Redact
}

// Observations is the channel of the server's observations, in the order
// the server acted on them; nil (never ready in a select) without replay.
// Each one must be acknowledged with Recorded.
func (l *Server) Observations() <-chan *Observation {
	if l == nil {
		return nil
	}
	return l.obs
}

// Port is the TCP port the server listens on (0 without replay).
func (l *Server) Port() int {
	if l == nil {
		return 0
	}
	return l.port
}

// PlanText redacts plan text as Config.PlanText does.
func (l *Server) PlanText(s string) string { return l.planText(s) }

func (l *Server) now() time.Duration { return time.Since(l.start) }

// emit hands o to the recording loop and waits until it is recorded; once
// the capture is stopping it keeps o for Stop to return.
func (l *Server) emit(o *Observation) {
	o.At = l.now()
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
func (l *Server) connState(c net.Conn, st http.ConnState) {
	if st != http.StateNew {
		return
	}
	if l.conns.Add(1) > int64(l.limits.Connections) {
		c.Close()
		if !l.connLimit.Swap(true) {
			l.restMu.Lock()
			l.rest = append(l.rest, &Observation{Truncate: true, Problem: fmt.Sprintf("loopback replay: connections exceeded limits.connections (%d); later connections were closed unanswered", l.limits.Connections)})
			l.restMu.Unlock()
		}
	}
}

// sleep waits d or until the capture stops; it reports whether d passed.
func (l *Server) sleep(d time.Duration) bool {
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

// requestData is the recorded data of a body: the placeholder, or "".
func requestData(n int) string {
	if n == 0 {
		return ""
	}
	return RedactedRequestBody
}

// enter registers a goroutine of the server with l.wg; it reports false
// once stop has begun (then the goroutine must not run).
func (l *Server) enter() bool {
	l.restMu.Lock()
	defer l.restMu.Unlock()
	if l.stopped {
		return false
	}
	l.wg.Add(1)
	return true
}

// Stop shuts the server down, closes every connection, waits for the
// goroutines and verifies the port refuses connections; it returns the
// observations not handed to the loop, ending with a note on the shutdown.
// Only the first call does anything; ShutdownProblems reports a shutdown
// that could not be verified.
func (l *Server) Stop() []*Observation {
	if l == nil {
		return nil
	}
	var rest []*Observation
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
		case <-time.After(stopTimeout):
			l.problems = append(l.problems, fmt.Sprintf("the loopback server's goroutines did not end within %v", stopTimeout))
		}
		if c, err := net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(l.port), time.Second); err == nil {
			c.Close()
			l.problems = append(l.problems, fmt.Sprintf("127.0.0.1:%d still accepts connections after shutdown", l.port))
		}
		l.restMu.Lock()
		rest, l.rest = l.rest, nil
		l.restMu.Unlock()
		note := "loopback replay: the server was shut down at the end of the capture, and its port refused a connection afterwards"
		if len(l.problems) > 0 {
			note = "loopback replay: the shutdown of the server could not be verified"
		}
		rest = append(rest, &Observation{Problem: note})
	})
	return rest
}

// ShutdownProblems says why the shutdown of a stopped server could not
// be verified (goroutines that did not end, a port still accepting); it
// is empty when it was verified, and for a nil server.
func (l *Server) ShutdownProblems() []string {
	if l == nil {
		return nil
	}
	return l.problems
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

package loopback

// HTTP side of the loopback replay server (see server.go).

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/backend/replay"
)

// ServeHTTP answers one request of the target.
func (l *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !l.enter() {
		hangUp(w)
		return
	}
	defer l.wg.Done()
	if isUpgrade(r) {
		l.serveWebSocket(w, r)
		return
	}
	method, path := r.Method, r.RequestURI
	body, present, tooLarge := l.readBody(w, r)
	if tooLarge {
		l.emit(&Observation{Protocol: ProtocolHTTP, Direction: DirectionRequest, Method: &method, Path: &path,
			Data: RedactedRequestBody, Outcome: ReplayOutcomeLimitExhausted,
			Truncate: true, Problem: fmt.Sprintf("loopback replay: a request body exceeded limits.protocol_body_bytes (%d bytes); it was answered 413", l.limits.ProtocolBodyBytes)})
		l.respond(w, false, ProtocolHTTP, method, path, http.StatusRequestEntityTooLarge, nil, tooLargeBody)
		return
	}
	if l.rt != nil {
		l.machineHTTP(w, r, body, present)
		return
	}
	l.mu.Lock()
	outcome, route := claimRoute(l.httpUsed, func(i int) (bool, int) {
		rt := l.plan.http[i]
		return rt.Method == method && rt.Path == path && headersMatch(rt.Headers, r.Header) && (rt.Body == nil || present && *rt.Body == body), rt.MaxCalls
	})
	l.emit(&Observation{Protocol: ProtocolHTTP, Direction: DirectionRequest, Method: &method, Path: &path,
		Data: requestData(len(body)), Outcome: outcome, BodyBytes: len(body), PlanPath: outcome == ReplayOutcomeMatched})
	l.mu.Unlock()
	switch outcome {
	case ReplayOutcomeUnmatched:
		l.respond(w, false, ProtocolHTTP, method, path, http.StatusNotFound, nil, unmatchedBody)
		return
	case ReplayOutcomeExhausted:
		l.respond(w, false, ProtocolHTTP, method, path, http.StatusConflict, nil, exhaustedBody)
		return
	}
	rt := l.plan.http[route]
	if !l.sleep(time.Duration(rt.DelayMS) * time.Millisecond) {
		return
	}
	if rt.Disconnect {
		l.emit(&Observation{Protocol: ProtocolHTTP, Direction: DirectionResponse, Method: &method, Path: &path, Outcome: ReplayOutcomeDisconnected, PlanPath: true})
		hangUp(w)
		return
	}
	l.respond(w, true, ProtocolHTTP, method, path, rt.Response.Status, rt.Response.Headers, rt.Response.Body)
}

// machineHTTP offers one HTTP request to the machine and performs the
// committed transition's actions.
func (l *Server) machineHTTP(w http.ResponseWriter, r *http.Request, body string, present bool) {
	method, path := r.Method, r.RequestURI
	ev := replay.Event{Type: replay.EventHTTPRequest, Connection: connID(r), Method: method, Path: path, Headers: lowerHeaders(r.Header)}
	if present {
		ev.Body = &body
	}
	d := l.dispatch(&ev, &Observation{Protocol: ProtocolHTTP, Direction: DirectionRequest, Method: &method, Path: &path,
		Data: requestData(len(body)), BodyBytes: len(body)})
	if d.Outcome != replay.OutcomeCommitted {
		l.refuse(w, ProtocolHTTP, method, path, d.Outcome)
		return
	}
	for _, a := range d.Actions {
		switch a.Type {
		case replay.ActionDelay:
			if !l.sleep(time.Duration(a.DurationMS) * time.Millisecond) {
				return
			}
		case replay.ActionHTTPResponse:
			l.respond(w, true, ProtocolHTTP, method, path, a.Status, a.Headers, a.Body)
		}
	}
}

// dispatch offers ev to the machine and emits o (the event's request or
// received observation) with the decision and the transition it
// committed, as one step under l.mu.
func (l *Server) dispatch(ev *replay.Event, o *Observation) replay.Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev.AtMS = int(l.now() / time.Millisecond)
	d := l.rt.Dispatch(*ev)
	o.Outcome = d.Outcome
	o.PlanPath = o.PlanPath || d.Outcome == replay.OutcomeCommitted
	if d.Outcome == replay.OutcomeCommitted {
		t := l.trans[d.TransitionID]
		to := &Transition{ID: l.planText(d.TransitionID), Before: l.planText(l.state), After: l.planText(t.To), Sensitive: []string{}}
		for _, c := range t.Captures {
			if c.Sensitive {
				to.Sensitive = append(to.Sensitive, l.planText(c.Variable))
			}
		}
		l.state = t.To
		o.Transition = to
	}
	l.emit(o)
	return d
}

// refuse answers a request the machine refused: 404 when unmatched, 409
// otherwise.
func (l *Server) refuse(w http.ResponseWriter, protocol, method, path, outcome string) {
	if outcome == replay.OutcomeUnmatched {
		l.respond(w, false, protocol, method, path, http.StatusNotFound, nil, unmatchedBody)
		return
	}
	l.respond(w, false, protocol, method, path, http.StatusConflict, nil, refusedBody)
}

// respond records and then writes a response.
func (l *Server) respond(w http.ResponseWriter, plan bool, protocol, method, path string, status int, headers map[string]string, body string) {
	if protocol == ProtocolWebSocket {
		body = "" // the answer to an upgrade is recorded without its text
	}
	l.emit(&Observation{Protocol: protocol, Direction: DirectionResponse, Method: &method, Path: &path,
		Data: body, Outcome: strconv.Itoa(status), BodyBytes: len(body), PlanPath: plan})
	h := w.Header()
	for k, v := range headers {
		h.Set(k, v)
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "text/plain; charset=utf-8")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// readBody reads a request body of at most limits.protocol_body_bytes;
// present says whether the request has a body at all.
func (l *Server) readBody(w http.ResponseWriter, r *http.Request) (body string, present, tooLarge bool) {
	present = r.ContentLength != 0 || r.Header.Get("Content-Length") != "" || len(r.TransferEncoding) > 0
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(l.limits.ProtocolBodyBytes)))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return "", true, true
	}
	return string(b), present || len(b) > 0, false
}

// hangUp closes the client's connection without an answer.
func hangUp(w http.ResponseWriter) {
	if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
		c.Close()
		return
	}
	panic(http.ErrAbortHandler) // net/http closes the connection
}

func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Upgrade") {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), "websocket") {
				return true
			}
		}
	}
	return false
}

// headersMatch reports whether every wanted header (lower-case name) is
// present with exactly this value.
func headersMatch(want map[string]string, got http.Header) bool {
	for k, v := range want {
		vals := got.Values(k)
		if len(vals) == 0 || strings.Join(vals, ", ") != v {
			return false
		}
	}
	return true
}

// lowerHeaders is the request's headers with lower-case names, repeated
// values joined by ", ".
func lowerHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return out
}

func connID(r *http.Request) string {
	id, _ := r.Context().Value(connKey{}).(string)
	return id
}

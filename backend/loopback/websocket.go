package loopback

// WebSocket side of the loopback replay server (see server.go).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/gatehouse/gatehouse/backend/replay"
)

// wsWriteTimeout bounds one message or close frame written to the target.
const wsWriteTimeout = 5 * time.Second

// wsConn is one accepted WebSocket connection.
type wsConn struct {
	l    *Server
	c    *websocket.Conn
	id   string
	path string

	mu     sync.Mutex // orders sends; guards closed
	closed bool
}

// serveWebSocket decides an upgrade request and, when replay accepts it,
// serves the connection until it ends.
func (l *Server) serveWebSocket(w http.ResponseWriter, r *http.Request) {
	method, path := r.Method, r.RequestURI
	req := &Observation{Protocol: ProtocolWebSocket, Direction: DirectionRequest, Method: &method, Path: &path}
	var d replay.Decision
	route := -1
	if l.rt != nil {
		ev := replay.Event{Type: replay.EventWebSocketConnect, Connection: connID(r), Path: path, Headers: lowerHeaders(r.Header)}
		if d = l.dispatch(&ev, req); d.Outcome != replay.OutcomeCommitted {
			l.refuse(w, ProtocolWebSocket, method, path, d.Outcome)
			return
		}
	} else {
		l.mu.Lock()
		req.Outcome, route = claimRoute(l.connUsed, func(i int) (bool, int) {
			rt := l.plan.conns[i]
			return rt.Path == path && headersMatch(rt.Headers, r.Header), rt.MaxCalls
		})
		req.PlanPath = req.Outcome == ReplayOutcomeMatched
		l.emit(req)
		l.mu.Unlock()
		switch req.Outcome {
		case ReplayOutcomeUnmatched:
			l.respond(w, false, ProtocolWebSocket, method, path, http.StatusNotFound, nil, "")
			return
		case ReplayOutcomeExhausted:
			l.respond(w, false, ProtocolWebSocket, method, path, http.StatusConflict, nil, "")
			return
		}
	}
	sw := &statusWriter{ResponseWriter: w, header: func(code int) {
		l.emit(&Observation{Protocol: ProtocolWebSocket, Direction: DirectionResponse, Method: &method, Path: &path, Outcome: strconv.Itoa(code), PlanPath: true})
	}}
	c, err := websocket.Accept(sw, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // the answer (a 4xx) is recorded
	}
	c.SetReadLimit(int64(l.limits.ProtocolBodyBytes))
	wc := &wsConn{l: l, c: c, id: connID(r), path: path}
	l.restMu.Lock()
	if l.stopped {
		l.restMu.Unlock()
		c.CloseNow()
		return
	}
	l.live[wc] = true
	l.restMu.Unlock()
	defer func() {
		l.restMu.Lock()
		delete(l.live, wc)
		l.restMu.Unlock()
		c.CloseNow()
	}()
	opened := time.Now()
	if l.rt != nil {
		l.spawn(func() { wc.perform(d.Actions) })
	} else {
		rt := l.plan.conns[route]
		l.spawn(func() { wc.script(opened, rt.Messages, rt.DisconnectAfterMS) })
	}
	wc.read()
}

// spawn runs f on a goroutine of the server (not after stop began).
func (l *Server) spawn(f func()) {
	if !l.enter() {
		return
	}
	go func() {
		defer l.wg.Done()
		f()
	}()
}

// read handles the target's messages until the connection ends.
func (wc *wsConn) read() {
	l := wc.l
	for {
		_, data, err := wc.c.Read(l.ctx)
		if err != nil {
			wc.mu.Lock()
			was := wc.closed
			wc.closed = true
			wc.mu.Unlock()
			if was || l.ctx.Err() != nil {
				return // closed by replay, or the capture is stopping
			}
			o := &Observation{Protocol: ProtocolWebSocket, Direction: DirectionReceived, Path: &wc.path, Outcome: ReplayOutcomeClosed, PlanPath: true}
			if errors.Is(err, websocket.ErrMessageTooBig) {
				o.Data, o.Outcome, o.Truncate = RedactedRequestBody, ReplayOutcomeLimitExhausted, true
				o.Problem = fmt.Sprintf("loopback replay: a WebSocket message exceeded limits.protocol_body_bytes (%d bytes); the connection was closed", l.limits.ProtocolBodyBytes)
			}
			l.emit(o)
			return
		}
		received := time.Now()
		body := string(data)
		o := &Observation{Protocol: ProtocolWebSocket, Direction: DirectionReceived, Path: &wc.path, Data: requestData(len(body)), BodyBytes: len(body), PlanPath: true}
		if l.rt != nil {
			ev := replay.Event{Type: replay.EventWebSocketMessage, Connection: wc.id, Body: &body}
			if d := l.dispatch(&ev, o); d.Outcome == replay.OutcomeCommitted {
				l.spawn(func() { wc.perform(d.Actions) })
			}
			continue
		}
		l.mu.Lock()
		var route int
		o.Outcome, route = claimRoute(l.msgUsed, func(i int) (bool, int) {
			rt := l.plan.msgs[i]
			return rt.Path == wc.path && (rt.Body == nil || *rt.Body == body), rt.MaxCalls
		})
		l.emit(o)
		l.mu.Unlock()
		if route >= 0 {
			rt := l.plan.msgs[route]
			l.spawn(func() { wc.replies(received, rt) })
		}
	}
}

// script sends a websocket_connections route's messages and disconnect.
func (wc *wsConn) script(opened time.Time, msgs []timedMessage, disconnectAfter *int) {
	for _, m := range msgs {
		if !wc.l.sleep(time.Until(opened.Add(time.Duration(m.DelayMS) * time.Millisecond))) {
			return
		}
		wc.send(m.Data)
	}
	if disconnectAfter != nil && wc.l.sleep(time.Until(opened.Add(time.Duration(*disconnectAfter)*time.Millisecond))) {
		wc.disconnect()
	}
}

// replies answers one matched message of a websocket_messages route.
func (wc *wsConn) replies(received time.Time, rt wsMessageRoute) {
	for _, m := range rt.Replies {
		if !wc.l.sleep(time.Until(received.Add(time.Duration(m.DelayMS) * time.Millisecond))) {
			return
		}
		wc.send(m.Data)
	}
	if rt.Disconnect {
		wc.disconnect()
	}
}

// perform runs a committed transition's actions in order.
func (wc *wsConn) perform(actions []replay.Action) {
	for _, a := range actions {
		switch a.Type {
		case replay.ActionDelay:
			if !wc.l.sleep(time.Duration(a.DurationMS) * time.Millisecond) {
				return
			}
		case replay.ActionWebSocketSend:
			wc.send(a.Data)
		case replay.ActionDisconnect:
			wc.disconnect()
		}
	}
}

// send records and writes one text message (nothing once closed).
func (wc *wsConn) send(data string) {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	if wc.closed {
		return
	}
	wc.l.emit(&Observation{Protocol: ProtocolWebSocket, Direction: DirectionSent, Path: &wc.path, Data: data, Outcome: ReplayOutcomeSent, BodyBytes: len(data), PlanPath: true})
	ctx, cancel := context.WithTimeout(wc.l.ctx, wsWriteTimeout)
	defer cancel()
	wc.c.Write(ctx, websocket.MessageText, []byte(data))
}

// disconnect records and performs replay's close of the connection.
func (wc *wsConn) disconnect() {
	wc.mu.Lock()
	if wc.closed {
		wc.mu.Unlock()
		return
	}
	wc.closed = true
	wc.l.emit(&Observation{Protocol: ProtocolWebSocket, Direction: DirectionSent, Path: &wc.path, Outcome: ReplayOutcomeDisconnected, PlanPath: true})
	wc.mu.Unlock()
	wc.c.Close(websocket.StatusNormalClosure, "gatehouse replay: disconnect")
}

// statusWriter calls header once with the status before it is written;
// Unwrap lets the WebSocket library reach the connection to hijack.
type statusWriter struct {
	http.ResponseWriter
	header func(code int)
	done   bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.done {
		s.done = true
		s.header(code)
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if !s.done {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

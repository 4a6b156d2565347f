package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sessions (docs/mcp.md "Sessions"): one mcp.Server per MCP session,
// created by the request that opens the session and released when the
// session ends (DELETE, idle timeout, a failed initialize); a bounded
// number of live sessions per agent; only the session's owner may end it
// or cancel its calls.
//
// The SDK asks its getServer callback on every HTTP request, also for
// requests of existing sessions (it only reads the server's protocol
// versions then). So the callback hands out a per-session server only to
// the request that creates the session, found through a slot the handler
// put into that request's context, and the shared base server (no tools)
// to every other request.

// mcpLimits bounds the agent interface; tests shorten them.
type mcpLimits struct {
	Idle      time.Duration // an idle session is closed after this long
	PerAgent  int           // live sessions per agent
	KeepAlive time.Duration // progress interval while a call waits for a person
}

func defaultMCPLimits() mcpLimits {
	return mcpLimits{Idle: 30 * time.Minute, PerAgent: 16, KeepAlive: 10 * time.Second}
}

// mcpSession is one live MCP session: its own server and tools.
type mcpSession struct {
	id      string
	agentID string
	srv     *mcp.Server
	tools   *mcpTools
}

// sessionSlot carries the session a creating request opened from the
// handler to the getServer callback.
type sessionSlot struct{ sess *mcpSession }

type sessionSlotKey struct{}

const sessionHeader = "Mcp-Session-Id"

// getServer is the SDK's callback (see the comment at the top).
func (s *mcpService) getServer(r *http.Request) *mcp.Server {
	if slot, ok := r.Context().Value(sessionSlotKey{}).(*sessionSlot); ok && slot.sess != nil && r.Header.Get(sessionHeader) == "" {
		return slot.sess.srv
	}
	return s.base
}

// serve is the /mcp handler behind the bearer-token check.
func (s *mcpService) serve(w http.ResponseWriter, r *http.Request) {
	info := auth.TokenInfoFromContext(r.Context())
	if info == nil { // RequireBearerToken guarantees one; fail closed anyway
		http.Error(w, "unauthenticated", http.StatusUnauthorized)
		return
	}
	if id := r.Header.Get(sessionHeader); id != "" {
		// The SDK closes a session only after its in-flight calls return,
		// and a run_skill call may be waiting for a person; so the owner's
		// DELETE first cancels the session's calls. Anyone else's DELETE
		// is left to the SDK, which refuses it.
		if r.Method == http.MethodDelete && s.ownerOf(id) == info.UserID {
			s.cancelCalls(id)
		}
		s.stream.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost || !isInitialize(w, r) {
		// The SDK answers: a session id is required, or a probe (the Go
		// client's server/discover) on a throwaway session of the base
		// server, which has no tools and which the SDK closes at once.
		s.stream.ServeHTTP(w, r)
		return
	}
	sess, err := s.open(info.UserID)
	if err != nil {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "5")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":%q}}`, err.Error())
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), sessionSlotKey{}, &sessionSlot{sess: sess}))
	s.stream.ServeHTTP(w, r)
	s.settle(sess)
}

// maxInitializeBytes bounds the body of a request without a session id
// that Gatehouse reads to see whether it opens a session.
const maxInitializeBytes = 1 << 20

// isInitialize reports whether the POST r is an initialize request; the
// body stays readable for the SDK.
func isInitialize(w http.ResponseWriter, r *http.Request) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInitializeBytes))
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false // the SDK reports the body's problem
	}
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &m) == nil && m.Method == "initialize"
}

// open reserves a session of agentID and builds its server.
func (s *mcpService) open(agentID string) (*mcpSession, error) {
	s.mu.Lock()
	if s.perAgent[agentID] >= s.limits.PerAgent {
		s.mu.Unlock()
		return nil, fmt.Errorf("this agent already has %d open MCP sessions (the limit); close one (HTTP DELETE) or wait for an idle one to time out after %v", s.limits.PerAgent, s.limits.Idle)
	}
	s.perAgent[agentID]++
	sess := &mcpSession{id: rand.Text(), agentID: agentID}
	s.sessions[sess.id] = sess
	s.mu.Unlock()
	sess.tools, sess.srv = s.serverFor(agentID, sess.id)
	return sess, nil
}

// settle runs after the request that opened sess: if the SDK kept the
// session, it is released when the session ends; otherwise (an
// initialize that failed, a refused request) at once.
func (s *mcpService) settle(sess *mcpSession) {
	for ss := range sess.srv.Sessions() {
		go func() {
			ss.Wait()
			s.release(sess)
		}()
		return
	}
	s.release(sess)
}

// release forgets sess; its server and tools become garbage.
func (s *mcpService) release(sess *mcpSession) {
	sess.tools.cancelTickets()
	s.evidence.detach(sess.tools)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sessions[sess.id] != sess {
		return
	}
	delete(s.sessions, sess.id)
	if s.perAgent[sess.agentID]--; s.perAgent[sess.agentID] <= 0 {
		delete(s.perAgent, sess.agentID)
	}
}

// ownerOf is the agent that opened session id ("" if none is live).
func (s *mcpService) ownerOf(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess := s.sessions[id]; sess != nil {
		return sess.agentID
	}
	return ""
}

// liveSessions counts the live sessions (for tests and diagnostics).
func (s *mcpService) liveSessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// challenge adds the Bearer challenge to every 401 (RFC 6750 §3), which
// the SDK's middleware leaves out when no OAuth metadata is configured.
type challenge struct{ http.ResponseWriter }

func (c challenge) WriteHeader(code int) {
	if code == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "" {
		c.Header().Set("WWW-Authenticate", `Bearer realm="gatehouse"`)
	}
	c.ResponseWriter.WriteHeader(code)
}

// Flush keeps streaming responses working through the wrapper.
func (c challenge) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (c challenge) Unwrap() http.ResponseWriter { return c.ResponseWriter }

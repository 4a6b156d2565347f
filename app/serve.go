package app

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/frontend"
)

// sessionCookie carries the per-launch token after the opening URL.
const sessionCookie = "gatehouse_session"

// server is browser mode: the embedded UI and the facade bridge on a
// loopback address, unlocked by a per-launch token.
type server struct {
	facade *Facade
	mcp    *mcpService
	bridge *bridge
	token  string
	hosts  map[string]bool // acceptable Host header values
	origin map[string]bool // acceptable Origin header values
	static http.Handler
}

func newServer(f *Facade, addr net.Addr) (*server, error) {
	b, err := newBridge(f)
	if err != nil {
		return nil, err
	}
	var t [32]byte
	if _, err := rand.Read(t[:]); err != nil {
		return nil, err
	}
	port := addr.(*net.TCPAddr).Port
	s := &server{facade: f, mcp: newMCPService(f, defaultMCPLimits()), bridge: b, token: hex.EncodeToString(t[:]), hosts: map[string]bool{}, origin: map[string]bool{},
		static: http.FileServerFS(frontend.Dist())}
	for _, h := range []string{"127.0.0.1", "localhost"} {
		hp := fmt.Sprintf("%s:%d", h, port)
		s.hosts[hp] = true
		s.origin["http://"+hp] = true
	}
	return s, nil
}

// ServeHTTP applies the local API guard, then routes.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	// DNS-rebinding defence: only the loopback name we listen on.
	if !s.hosts[r.Host] {
		apiError(w, http.StatusForbidden, "bad_host", "this server only answers requests addressed to its loopback address")
		return
	}
	if r.URL.Path == "/mcp" {
		// Agents: agent tokens only (checked by the MCP service); a browser
		// page of another origin gets nothing.
		if o := r.Header.Get("Origin"); o != "" && !s.origin[o] {
			apiError(w, http.StatusForbidden, "bad_origin", "cross-origin MCP requests are refused")
			return
		}
		s.mcp.handler.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead && !s.origin[r.Header.Get("Origin")] {
		apiError(w, http.StatusForbidden, "bad_origin", "state-changing requests must come from this server's own pages")
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		s.serveUI(w, r)
		return
	}
	h.Set("Cache-Control", "no-store")
	switch s.authorized(r) {
	case authMissing:
		apiError(w, http.StatusUnauthorized, "unauthenticated", "open the URL printed by `gatehouse serve` (it carries the access token)")
		return
	case authWrong:
		apiError(w, http.StatusForbidden, "forbidden", "wrong access token")
		return
	}
	switch {
	case r.URL.Path == "/api/" && r.Method == http.MethodGet:
		writeJSONResponse(w, http.StatusOK, map[string]any{"methods": s.bridge.names()})
	case r.URL.Path == "/api/events" && r.Method == http.MethodGet:
		s.serveEvents(w, r)
	case r.Method == http.MethodPost:
		s.serveCall(w, r, strings.TrimPrefix(r.URL.Path, "/api/"))
	default:
		apiError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST /api/<Method>")
	}
}

type authResult int

const (
	authOK authResult = iota
	authMissing
	authWrong
)

func (s *server) authorized(r *http.Request) authResult {
	presented := ""
	if c, err := r.Cookie(sessionCookie); err == nil {
		presented = c.Value
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		presented = v
	}
	switch {
	case presented == "":
		return authMissing
	case subtle.ConstantTimeCompare([]byte(presented), []byte(s.token)) != 1:
		return authWrong
	}
	return authOK
}

// serveUI serves the embedded frontend; the opening URL's token becomes an
// HttpOnly, SameSite=Strict cookie and disappears from the address bar.
func (s *server) serveUI(w http.ResponseWriter, r *http.Request) {
	if t := r.URL.Query().Get("token"); t != "" {
		if subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) != 1 {
			apiError(w, http.StatusForbidden, "forbidden", "wrong access token")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if r.URL.Path == "/" || r.URL.Path == "/index.html" {
		if _, err := fs.Stat(frontend.Dist(), "index.html"); err != nil {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<!doctype html><title>Gatehouse</title><p>The web UI is not built into this binary. Run <code>make build</code>.</p>")
			return
		}
	}
	s.static.ServeHTTP(w, r)
}

func (s *server) serveCall(w http.ResponseWriter, r *http.Request, method string) {
	limit := callBodyLimit(method)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		apiError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body over %d bytes", limit))
		return
	}
	res, err := s.bridge.call(method, body)
	if err != nil {
		var ce *CLIError
		if !errors.As(err, &ce) {
			ce = &CLIError{Code: "failed", Category: CategoryInternal, Message: err.Error()}
		}
		status := http.StatusBadRequest
		switch ce.Category {
		case CategoryNotFound:
			status = http.StatusNotFound
		case CategoryInternal, CategoryIO:
			status = http.StatusInternalServerError
		}
		writeJSONResponse(w, status, map[string]any{"error": true, "code": ce.Code, "category": ce.Category, "message": ce.Message, "details": ce.Details})
		return
	}
	writeJSONResponse(w, http.StatusOK, res)
}

// serveEvents streams UI events as server-sent events until the client
// goes away.
func (s *server) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		apiError(w, http.StatusInternalServerError, "no_streaming", "streaming unsupported")
		return
	}
	events, stop := s.facade.events.subscribe(256)
	defer stop()
	defer s.mcp.windows.open()() // a page following events can decide
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, ": connected\n\n")
	fl.Flush()
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keepalive.C:
			io.WriteString(w, ": keepalive\n\n")
			fl.Flush()
		case e, ok := <-events:
			if !ok {
				return
			}
			b, _ := json.Marshal(e.Data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.Name, b)
			fl.Flush()
		}
	}
}

func writeJSONResponse(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	writeJSONResponse(w, status, map[string]any{"error": true, "code": code, "category": "access", "message": msg})
}

// listenLoopback listens on addr, which must name a loopback IP.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("--addr %q: browser mode listens on a loopback IP only (for example 127.0.0.1:7420)", addr)
	}
	return net.Listen("tcp", addr)
}

// serveUntil runs the HTTP server until ctx ends.
func serveUntil(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

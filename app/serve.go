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
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/frontend"
)

// openNonceTTL is how long the one-time opening nonce of `serve --open`
// stays redeemable.
const openNonceTTL = 60 * time.Second

// server is browser mode: the embedded UI and the facade bridge on a
// loopback address, unlocked by a per-launch token.
//
// The token is never a cookie (cookies are not port-scoped, so every
// server on 127.0.0.1 would receive it): the page keeps it in
// sessionStorage, which is scoped to this origin, and sends it as
// "Authorization: Bearer". The printed URL carries it in its query, which
// the page moves into sessionStorage and removes from the address bar;
// `serve --open` hands xdg-open a one-time nonce instead (other users can
// read a command line), which the page exchanges for the token once.
type server struct {
	facade *Facade
	mcp    *mcpService
	bridge *bridge
	token  string
	hosts  map[string]bool // acceptable Host header values
	origin map[string]bool // acceptable Origin header values
	static http.Handler
	now    func() time.Time

	mu     sync.Mutex
	nonces map[string]time.Time // opening nonces not yet redeemed, with their expiry
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
		static: http.FileServerFS(frontend.Dist()), now: time.Now, nonces: map[string]time.Time{}}
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
	if r.URL.Path == "/session/open" {
		h.Set("Cache-Control", "no-store")
		s.redeemNonce(w, r)
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

// authorized accepts only "Authorization: Bearer <token>"; a cookie never
// authorizes anything.
func (s *server) authorized(r *http.Request) authResult {
	presented := ""
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

// serveUI serves the embedded frontend. An opening URL with a wrong token
// is refused; a right one gets the page, whose script moves the token into
// sessionStorage (nothing is set on the response: no cookie).
func (s *server) serveUI(w http.ResponseWriter, r *http.Request) {
	if t := r.URL.Query().Get("token"); t != "" {
		if subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) != 1 {
			apiError(w, http.StatusForbidden, "forbidden", "wrong access token")
			return
		}
		w.Header().Set("Cache-Control", "no-store")
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

// openingURL returns base + "/?open=<nonce>" with a fresh one-time nonce
// that redeemNonce exchanges for the token within openNonceTTL. It is what
// `serve --open` puts on xdg-open's command line instead of the token.
func (s *server) openingURL(base string) string {
	var n [32]byte
	rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for k, exp := range s.nonces { // expired ones are dropped, so the map stays small
		if !now.Before(exp) {
			delete(s.nonces, k)
		}
	}
	s.nonces[nonce] = now.Add(openNonceTTL)
	return base + "/?open=" + nonce
}

// redeemNonce answers POST /session/open {"nonce": "..."} with the token,
// once per nonce and only before it expires; the request passed the Host
// and Origin checks of ServeHTTP.
func (s *server) redeemNonce(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		apiError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST /session/open")
		return
	}
	var req struct {
		Nonce string `json:"nonce"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1024)).Decode(&req); err != nil || req.Nonce == "" {
		apiError(w, http.StatusBadRequest, "bad_request", `send {"nonce": "..."}`)
		return
	}
	s.mu.Lock()
	exp, ok := s.nonces[req.Nonce]
	delete(s.nonces, req.Nonce)
	s.mu.Unlock()
	if !ok || !s.now().Before(exp) {
		apiError(w, http.StatusForbidden, "opening_link_used", "this opening link was already used or has expired; open the URL printed by `gatehouse serve`")
		return
	}
	writeJSONResponse(w, http.StatusOK, map[string]string{"token": s.token})
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
		case CategoryUnavailable:
			status = http.StatusServiceUnavailable
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
	if jw, ok := v.(jsonWriter); ok {
		jw.writeJSON(w)
		return
	}
	json.NewEncoder(w).Encode(v)
}

// jsonWriter is a result that writes its own JSON: GetEvidenceResult puts
// the Evidence file's verified bytes in as they are, where encoding/json
// would re-scan and re-escape 10 MB (about as long as hashing it 5 times).
type jsonWriter interface {
	writeJSON(w io.Writer) error
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

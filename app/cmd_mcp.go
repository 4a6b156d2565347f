package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

const mcpUsage = `mcp

A stdio MCP server for agent hosts that launch servers as commands: it relays
to the running Gatehouse app (found through runtime.json in the data
directory) and authenticates with the agent token in GATEHOUSE_AGENT_TOKEN.

It never dies silently: an HTTP error becomes a JSON-RPC error for that
request (a notification's is reported on stderr), a malformed line gets
-32700 and the bridge goes on; a refused token, an ended session or an app
that went away is reported on stderr and ends the bridge with status 1.`

// maxBridgeLine bounds one JSON-RPC message from the host or the app.
const maxBridgeLine = 8 << 20

// The bridge speaks Streamable HTTP itself instead of relaying through
// the SDK's client transport: that transport fails the whole connection
// on the first HTTP error without a body it understands (so one unknown
// method ended the bridge), and it hides which request an HTTP status
// belongs to. Here every message is one POST whose answer (JSON or an
// event stream) is written back as it comes, and each failure is mapped
// to the request that caused it (docs/mcp.md "The stdio bridge").

// runMCP relays JSON-RPC messages between stdio and the running app's
// Streamable HTTP endpoint until stdin ends or the bridge cannot go on.
func runMCP(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "mcp", mcpUsage)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	token := io.Getenv("GATEHOUSE_AGENT_TOKEN")
	if token == "" {
		return errorf("no_token", CategoryUsage, "set GATEHOUSE_AGENT_TOKEN to an agent token (the person creates one in Gatehouse: Agents, or `gatehouse agent add NAME`)")
	}
	dir, err := DataDir(io.Getenv)
	if err != nil {
		return errorf("data_dir", CategoryIO, "%v", err)
	}
	ri, err := readRuntimeFile(dir)
	if err != nil {
		return errorf("not_running", CategoryNotFound, "%v", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := &mcpBridge{url: ri.URL + "/mcp", token: token, out: io.Stdout, errw: io.Stderr, client: &http.Client{}, ctx: ctx, stop: cancel}
	return b.run(io.Stdin)
}

type mcpBridge struct {
	url, token string
	client     *http.Client
	ctx        context.Context
	stop       context.CancelFunc

	outMu sync.Mutex
	out   io.Writer
	errw  io.Writer

	mu       sync.Mutex
	session  string
	version  string
	fatal    error // why the bridge must end
	inflight sync.WaitGroup
	listened bool

	barriers barrierSet
	// hostDone is closed when stdin ends: the host will answer no ping.
	hostDone chan struct{}
}

// rpcError is the JSON-RPC error object the bridge writes.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// peek is what the bridge reads of a message to route it.
type peek struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
}

type stdinLine struct {
	line    []byte
	tooLong bool
}

func (b *mcpBridge) run(stdin io.Reader) error {
	lines := make(chan stdinLine)
	b.hostDone = make(chan struct{})
	go func() {
		defer close(lines)
		defer close(b.hostDone)
		rd := bufio.NewReaderSize(stdin, 64<<10)
		for {
			line, tooLong, err := readLine(rd, maxBridgeLine)
			if len(bytes.TrimSpace(line)) > 0 || tooLong {
				select {
				case lines <- stdinLine{line, tooLong}:
				case <-b.ctx.Done():
					return
				}
			}
			if err != nil {
				return // stdin ended: the host is done
			}
		}
	}()
	for {
		select {
		case <-b.ctx.Done():
			if f := b.fatalErr(); f != nil {
				return f
			}
			return b.ctx.Err()
		case l, ok := <-lines:
			if !ok {
				// The host is gone: end the session first (the owner's
				// DELETE cancels calls still waiting for a person).
				b.endSession()
				b.inflight.Wait()
				return b.fatalErr()
			}
			b.handle(l.line, l.tooLong)
		}
	}
}

// readLine reads one line of at most limit bytes; a longer line is
// consumed and reported as tooLong.
func readLine(rd *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, isPrefix, err := rd.ReadLine()
		if len(line)+len(chunk) > limit {
			tooLong = true
		} else {
			line = append(line, chunk...)
		}
		if err != nil || !isPrefix {
			return line, tooLong, err
		}
	}
}

func (b *mcpBridge) handle(line []byte, tooLong bool) {
	var p peek
	switch {
	case tooLong:
		b.reply(nil, rpcError{-32700, fmt.Sprintf("message longer than %d bytes", maxBridgeLine)})
		return
	case !json.Valid(line) || json.Unmarshal(line, &p) != nil:
		b.reply(nil, rpcError{-32700, "parse error: the line is not a JSON-RPC message"})
		return
	}
	if p.Method == "" && b.barriers.answered(p.ID) {
		return // the host's answer to the bridge's own ping (barrier.go)
	}
	isCall := p.Method != "" && len(p.ID) > 0 && string(p.ID) != "null"
	b.mu.Lock()
	first := b.session == ""
	b.mu.Unlock()
	if first || p.Method == "initialize" {
		b.post(line, p, isCall) // the session id comes from this answer
		return
	}
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		b.post(line, p, isCall)
	}()
}

// post sends one message and relays its answer.
func (b *mcpBridge) post(line []byte, p peek, isCall bool) {
	req, _ := http.NewRequestWithContext(b.ctx, http.MethodPost, b.url, bytes.NewReader(line))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	b.headers(req)
	resp, err := b.client.Do(req)
	if err != nil {
		b.die(p, isCall, fmt.Errorf("the Gatehouse app at %s is not answering (%v); is it still running?", b.url, err))
		return
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get(sessionHeader); sid != "" {
		b.mu.Lock()
		b.session = sid
		b.mu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		b.die(p, isCall, errors.New("Gatehouse refused the agent token (401): check GATEHOUSE_AGENT_TOKEN; the person can list and add agents in Gatehouse"))
		return
	case resp.StatusCode == http.StatusNotFound && b.sessionID() != "":
		b.die(p, isCall, errors.New("the MCP session ended on the Gatehouse side (idle timeout, or the app restarted); restart this server"))
		return
	case resp.StatusCode >= 300:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		msg := fmt.Sprintf("Gatehouse answered HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(body)))
		var e struct {
			Error *rpcError `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != nil {
			msg = fmt.Sprintf("Gatehouse answered HTTP %d: %s", resp.StatusCode, e.Error.Message)
		}
		if isCall {
			b.reply(p.ID, rpcError{-32603, msg})
		} else {
			fmt.Fprintf(b.errw, "gatehouse mcp: %s (for %s; dropped)\n", msg, describe(p))
		}
		return
	}
	switch baseMediaType(resp.Header.Get("Content-Type")) {
	case "text/event-stream":
		answered := b.relayEvents(resp.Body, p.ID)
		if isCall && !answered && b.ctx.Err() == nil {
			b.reply(p.ID, rpcError{-32603, "the Gatehouse app closed the answer stream without a result"})
		}
	case "application/json":
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxBridgeLine))
		b.noteInitialize(data)
		b.write(data)
	}
	if p.Method == "notifications/initialized" {
		b.listen()
	}
}

// relayEvents writes each event of an answer stream; it reports whether
// the answer to id was among them.
func (b *mcpBridge) relayEvents(body io.Reader, id json.RawMessage) bool {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), maxBridgeLine)
	var data []byte
	answered := false
	notified := false // a notification for this request was relayed
	flush := func() {
		if len(data) == 0 {
			return
		}
		var q peek
		isAnswer := json.Unmarshal(data, &q) == nil && q.Method == "" && len(id) > 0 && bytes.Equal(bytes.TrimSpace(q.ID), bytes.TrimSpace(id))
		switch {
		case isAnswer:
			answered = true
			b.noteInitialize(data)
			if notified {
				b.barrier() // the host has handled every notification before the answer
			}
		case q.Method != "" && len(q.ID) == 0:
			notified = true
		}
		b.write(data)
		data = nil
	}
	for sc.Scan() {
		l := sc.Bytes()
		switch {
		case len(l) == 0:
			flush()
		case bytes.HasPrefix(l, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(l, []byte("data:")), []byte(" "))...)
		}
	}
	flush()
	return answered
}

// noteInitialize keeps the negotiated protocol version for the
// MCP-Protocol-Version header of later requests.
func (b *mcpBridge) noteInitialize(data []byte) {
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(data, &r) == nil && r.Result.ProtocolVersion != "" {
		b.mu.Lock()
		b.version = r.Result.ProtocolVersion
		b.mu.Unlock()
	}
}

// listen relays the session's server-initiated messages (list changes)
// from the standalone event stream, once per session.
func (b *mcpBridge) listen() {
	b.mu.Lock()
	if b.listened || b.session == "" {
		b.mu.Unlock()
		return
	}
	b.listened = true
	b.mu.Unlock()
	go func() {
		req, _ := http.NewRequestWithContext(b.ctx, http.MethodGet, b.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		b.headers(req)
		resp, err := b.client.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			b.relayEvents(resp.Body, nil)
		}
	}()
}

func (b *mcpBridge) headers(req *http.Request) {
	req.Header.Set("Authorization", "Bearer "+b.token)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.session != "" {
		req.Header.Set(sessionHeader, b.session)
	}
	if b.version != "" {
		req.Header.Set("MCP-Protocol-Version", b.version)
	}
}

func (b *mcpBridge) sessionID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.session
}

// die answers the request (if it is one), reports why on stderr and
// ends the bridge with a non-zero status.
func (b *mcpBridge) die(p peek, isCall bool, err error) {
	if isCall {
		b.reply(p.ID, rpcError{-32603, err.Error()})
	}
	b.mu.Lock()
	first := b.fatal == nil
	if first {
		b.fatal = errorf("bridge", CategoryIO, "%v", err)
	}
	b.mu.Unlock()
	if first {
		b.stop()
	}
}

func (b *mcpBridge) fatalErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.fatal
}

// endSession tells the app the host is gone (the owner's DELETE).
func (b *mcpBridge) endSession() {
	if b.sessionID() == "" || b.fatalErr() != nil {
		return
	}
	req, _ := http.NewRequest(http.MethodDelete, b.url, nil)
	b.headers(req)
	if resp, err := b.client.Do(req); err == nil {
		resp.Body.Close()
	}
}

func (b *mcpBridge) reply(id json.RawMessage, e rpcError) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	b.write(msg)
}

func (b *mcpBridge) write(msg []byte) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return
	}
	b.outMu.Lock()
	defer b.outMu.Unlock()
	b.out.Write(append(msg, '\n'))
}

func describe(p peek) string {
	if p.Method != "" {
		return p.Method
	}
	return "a response"
}

func baseMediaType(ct string) string {
	base, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(base))
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/skills"
)

// mcpService is the agent face of the app: MCP over Streamable HTTP at
// /mcp, one MCP session per run, authenticated with agent tokens only. It
// calls into the same facade state as the UI (so a run_skill proposal
// shows up in the app's consent dialog) but has no path to policy, trust
// scopes, agents or settings.
type mcpService struct {
	f        *Facade
	limits   mcpLimits
	handler  http.Handler               // /mcp: bearer check, then serve (mcp_sessions.go)
	stream   *mcp.StreamableHTTPHandler // the SDK's transport
	base     *mcp.Server                // answers getServer for requests of existing sessions
	evidence *evidenceConns             // live connections' Evidence resources (mcp_resources.go)
	windows  windowTracker              // open app pages that can decide (mcp_wait.go)

	mu       sync.Mutex
	sessions map[string]*mcpSession                      // live sessions by id
	perAgent map[string]int                              // agent id → live sessions
	runs     map[*mcp.ServerSession]string               // session → consent run
	inflight map[string]map[*context.CancelFunc]struct{} // session id → cancels of running tool calls
}

func newMCPService(f *Facade, limits mcpLimits) *mcpService {
	s := &mcpService{f: f, limits: limits, runs: map[*mcp.ServerSession]string{}, inflight: map[string]map[*context.CancelFunc]struct{}{},
		sessions: map[string]*mcpSession{}, perAgent: map[string]int{},
		evidence: &evidenceConns{db: f.env.DB, conns: map[*mcpTools]time.Time{}}}
	events, stop := f.events.subscribe(64)
	f.onClose(stop)
	go s.evidence.follow(f.ctx, events)
	s.base = mcp.NewServer(&mcp.Implementation{Name: "gatehouse", Version: Version}, nil)
	s.stream = mcp.NewStreamableHTTPHandler(s.getServer, &mcp.StreamableHTTPOptions{SessionTimeout: limits.Idle, PropagateRequestCancellation: true})
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		a, err := f.agents.Authenticate(ctx, token)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", auth.ErrInvalidToken, err)
		}
		return &auth.TokenInfo{UserID: a.ID}, nil
	}
	guarded := auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(http.HandlerFunc(s.serve))
	s.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { guarded.ServeHTTP(challenge{w}, r) })
	return s
}

// track registers a running tool call of session id; the returned
// function unregisters it.
func (s *mcpService) track(id string, cancel context.CancelFunc) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight[id] == nil {
		s.inflight[id] = map[*context.CancelFunc]struct{}{}
	}
	s.inflight[id][&cancel] = struct{}{}
	return func() {
		s.mu.Lock()
		delete(s.inflight[id], &cancel)
		if len(s.inflight[id]) == 0 {
			delete(s.inflight, id)
		}
		s.mu.Unlock()
	}
}

func (s *mcpService) cancelCalls(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.inflight[id] {
		(*c)()
	}
}

// runFor returns the consent run of a session, starting it on first use
// and ending it (cancelling outstanding proposals) when the session ends.
func (s *mcpService) runFor(ss *mcp.ServerSession, agentID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.runs[ss]; ok {
		return id
	}
	id := s.f.consent.StartRun(agentID)
	s.runs[ss] = id
	go func() {
		ss.Wait()
		s.f.consent.EndRun(id)
		s.f.forgetRunLater(id)
		s.mu.Lock()
		delete(s.runs, ss)
		s.mu.Unlock()
	}()
	return id
}

// serverFor builds the MCP server of one new session id of the agent
// agentID (mcp_sessions.go).
func (s *mcpService) serverFor(agentID, id string) (*mcpTools, *mcp.Server) {
	t := &mcpTools{s: s, agentID: agentID, local: map[string]bool{}, tickets: map[string]*ticket{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "gatehouse", Version: Version}, &mcp.ServerOptions{
		GetSessionID: func() string { return id },
		Instructions: "Gatehouse runs skill scripts only after the person approves them in the Gatehouse app (or a trust rule they set allows it). " +
			"Scripts run as frozen snapshots under a bounded JSON protocol; refusals come back as structured errors.",
		InitializedHandler: func(ctx context.Context, r *mcp.InitializedRequest) {
			s.runFor(r.Session, agentID)
		},
	})
	t.srv = srv
	srv.AddReceivingMiddleware(withToolMeta, withProgressToken)
	srv.AddTool(&mcp.Tool{Name: "list_skills", Description: "List the skills Gatehouse knows, with whether each has a runnable script.",
		InputSchema: objectSchema(nil, nil)}, t.listSkills)
	srv.AddTool(&mcp.Tool{Name: "read_skill", Description: "Read a skill: its SKILL.md instructions, resources and inspection. Never executes anything.",
		InputSchema: objectSchema(map[string]any{"name": stringSchema("skill name")}, []string{"name"})}, t.readSkill)
	srv.AddTool(&mcp.Tool{Name: "read_skill_resource", Description: "Read one file of a skill (a path relative to the skill folder).",
		InputSchema: objectSchema(map[string]any{"name": stringSchema("skill name"), "path": stringSchema("relative path, e.g. references/REFERENCE.md")}, []string{"name", "path"})}, t.readResource)
	srv.AddTool(&mcp.Tool{Name: "run_skill", Description: "Ask to run a skill's script with a JSON input in a workspace folder. " +
		"Unless a trust rule applies, the person is asked in the Gatehouse app (they have up to 5 minutes to decide). " +
		"With a progress token the call waits for the decision and the run, sending a progress notification at least every 10 s; " +
		"without one (or when wait_ms runs out) it returns {status: \"awaiting_decision\", ticket} instead, and await_run {ticket} resumes the same request. " +
		"If no Gatehouse window is open the result says so at once. " +
		"Only the latest request for a skill on a connection waits for a decision: a new run_skill call for the same skill replaces a waiting one, which ends with code \"superseded\". " +
		"Returns the run's envelope or a structured refusal.",
		InputSchema: objectSchema(map[string]any{
			"name":      stringSchema("skill name"),
			"input":     map[string]any{"type": "object", "description": "the invocation, validated against the skill's inputSchema"},
			"workspace": stringSchema("absolute path of the working directory"),
			"wait_ms":   map[string]any{"type": "integer", "minimum": 0, "description": "longest this call waits before returning awaiting_decision with a ticket (default: no limit with a progress token, 25000 without)"},
		}, []string{"name", "input", "workspace"})}, t.runSkill)
	srv.AddTool(&mcp.Tool{Name: "await_run", Description: "Keep waiting for a run_skill request that returned awaiting_decision (or running): the same proposal and run, never a new one. " +
		"Returns the run's envelope, a structured refusal, or awaiting_decision again with the same ticket.",
		InputSchema: objectSchema(map[string]any{
			"ticket":  stringSchema("the ticket of an awaiting_decision result of this connection"),
			"wait_ms": map[string]any{"type": "integer", "minimum": 0, "description": "longest this call waits (default as for run_skill)"},
		}, []string{"ticket"})}, t.awaitRun)
	s.addWorkflowTool(srv, t)
	s.addEvidenceTools(srv, t)
	s.addCaptureTools(srv, t)
	s.evidence.attach(s.f.ctx, t)
	return t, srv
}

func objectSchema(props map[string]any, required []string) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func stringSchema(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

type mcpTools struct {
	s       *mcpService
	agentID string
	srv     *mcp.Server // this connection's own server

	mu      sync.Mutex
	local   map[string]bool    // ids of the captures made on this connection
	tickets map[string]*ticket // run_skill executions not yet handed out (mcp_wait.go)
}

// decodeArgs strictly decodes tool arguments into v.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func jsonResult(v any, isError bool) *mcp.CallToolResult {
	if isError {
		return failed(completeFailure(v))
	}
	body, _ := json.Marshal(v)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: v}
	// A result that names an Evidence resource links it, so a host can
	// fetch or show it without parsing the JSON.
	if m, ok := v.(map[string]any); ok {
		if uri, ok := m["resource"].(string); ok && strings.HasPrefix(uri, evidenceURIPrefix) {
			id := strings.TrimPrefix(uri, evidenceURIPrefix)
			res.Content = append(res.Content, &mcp.ResourceLink{URI: uri, Name: "capture " + id, Title: "Process capture Evidence " + id,
				Description: "Process Capture v4 Evidence made by this call (resources/read returns it)", MIMEType: "application/json"})
		}
	}
	return res
}

// maxListedDescription bounds a description in list_skills (read_skill
// has it whole).
const maxListedDescription = 1024

// skillName checks a name argument.
func skillName(name string) *mcp.CallToolResult {
	if name == "" || filepath.Base(name) != name || name == "." || name == ".." {
		return toolIssues("invalid_arguments", "the arguments are invalid", mcpIssue{Path: "$.name", Code: "invalid_arguments", Message: "must be the name of a skill (list_skills shows them)"})
	}
	return nil
}

func (t *mcpTools) listSkills(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := decodeArgs(req.Params.Arguments, &struct{}{}); err != nil {
		return argsError(err), nil
	}
	cat, err := t.s.f.env.discover(ctx)
	if err != nil {
		return toolError("list_failed", messageOf(err)), nil
	}
	type row struct {
		Name        string    `json:"name"`
		Description string    `json:"description"`
		Valid       bool      `json:"valid"`
		Runnable    bool      `json:"runnable"`
		Reason      string    `json:"reason,omitempty"`
		Issue       *mcpIssue `json:"issue,omitempty"`
	}
	out := []row{}
	exs := t.s.f.env.inspectAll(cat.Skills)
	for i, s := range cat.Skills {
		ex := exs[i]
		r := row{Name: s.Name, Description: strictTruncate(s.Frontmatter.Description, maxListedDescription), Valid: s.Valid, Runnable: ex.Available, Reason: ex.Reason}
		switch {
		case !s.Valid:
			r.Reason = "invalid"
			if len(s.Errors) > 0 {
				r.Issue = &mcpIssue{Path: s.Errors[0].Path, Code: s.Errors[0].Code, Message: s.Errors[0].Message}
			}
		case !ex.Available && len(ex.Issues) > 0:
			r.Issue = &mcpIssue{Path: ex.Issues[0].Path, Code: ex.Issues[0].Code, Message: ex.Issues[0].Message}
		}
		out = append(out, r)
	}
	return jsonResult(map[string]any{"skills": out}, false), nil
}

func (t *mcpTools) readSkill(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := decodeArgs(req.Params.Arguments, &a); err != nil {
		return argsError(err), nil
	}
	if bad := skillName(a.Name); bad != nil {
		return bad, nil
	}
	res, err := t.s.f.InspectSkill(InspectSkillArgs{Name: a.Name})
	if err != nil {
		return toolError(codeOf(err), messageOf(err)), nil
	}
	r := jsonResult(res, false)
	// SKILL.md in its own block, so a host can show the instructions as
	// they are.
	r.Content = append(r.Content, &mcp.TextContent{Text: res.Body})
	return r, nil
}

func (t *mcpTools) readResource(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Name string `json:"name"`
		Path string `json:"path"`
	}
	if err := decodeArgs(req.Params.Arguments, &a); err != nil {
		return argsError(err), nil
	}
	if bad := skillName(a.Name); bad != nil {
		return bad, nil
	}
	if a.Path == "" {
		return toolIssues("invalid_arguments", "the arguments are invalid", mcpIssue{Path: "$.path", Code: "invalid_arguments", Message: "must be a path relative to the skill folder"}), nil
	}
	sk, err := t.s.f.env.resolveSkill(ctx, a.Name)
	if err != nil {
		return toolError(codeOf(err), messageOf(err)), nil
	}
	data, err := skills.ReadResource(sk, a.Path, 1<<20)
	if err != nil {
		return toolIssues("resource_refused", err.Error(), mcpIssue{Path: "$.path", Code: "resource_refused", Message: err.Error()}), nil
	}
	return resourceResult(a.Name, a.Path, data), nil
}

func (t *mcpTools) runSkill(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		Workspace string          `json:"workspace"`
		WaitMs    int64           `json:"wait_ms"`
	}
	if err := decodeArgs(req.Params.Arguments, &a); err != nil {
		return argsError(err), nil
	}
	if bad := skillName(a.Name); bad != nil {
		return bad, nil
	}
	var issues []mcpIssue
	if len(a.Input) == 0 || a.Input[0] != '{' {
		issues = append(issues, mcpIssue{Path: "$.input", Code: "invalid_arguments", Message: "must be a JSON object (the skill's invocation)"})
	}
	if !filepath.IsAbs(a.Workspace) {
		issues = append(issues, mcpIssue{Path: "$.workspace", Code: "invalid_arguments", Message: "must be an absolute directory path"})
	}
	if a.WaitMs < 0 {
		issues = append(issues, mcpIssue{Path: "$.wait_ms", Code: "invalid_arguments", Message: "must be ≥ 0"})
	}
	if len(issues) > 0 {
		return toolIssues("invalid_arguments", "the arguments are invalid", issues...), nil
	}
	f := t.s.f
	sk, err := f.env.resolveSkill(ctx, a.Name)
	if err != nil {
		return toolError(codeOf(err), messageOf(err)), nil
	}
	ws, err := runner.ResolveWorkspace(a.Workspace)
	if err != nil {
		return toolIssues("invalid_workspace", err.Error(), mcpIssue{Path: "$.workspace", Code: "invalid_workspace", Message: err.Error()}), nil
	}
	runID := t.s.runFor(req.Session, t.agentID)
	creq := &consent.Request{AgentID: t.agentID, RunID: runID, Skill: sk.Name, Execution: f.env.inspectExecution(sk),
		Invocation: a.Input, Workspace: ws, Asker: &uiAsker{f: f, root: sk.Root.Path, description: sk.Frontmatter.Description}}
	if f.env.Pin != nil {
		creq.Pin = *f.env.Pin
	}
	k, err := t.startTicket(req.Session, creq)
	if err != nil {
		return toolError("too_many_runs", err.Error()), nil
	}
	return t.waitTicket(ctx, req, k, time.Duration(a.WaitMs)*time.Millisecond)
}

// watchSession pings the client while a call waits, and cancels the call
// when the client has gone away without saying so.
func watchSession(ctx context.Context, ss *mcp.ServerSession, cancel context.CancelFunc) {
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			pctx, stop := context.WithTimeout(ctx, 5*time.Second)
			err := ss.Ping(pctx, nil)
			stop()
			if err != nil && ctx.Err() == nil {
				cancel()
				return
			}
		}
	}
}

func messageOf(err error) string {
	var ce *CLIError
	if errors.As(err, &ce) {
		return ce.Message
	}
	return err.Error()
}

func codeOf(err error) string {
	var ce *CLIError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return "failed"
}

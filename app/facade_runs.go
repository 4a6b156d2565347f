package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/backend/agents"
	"github.com/gatehouse/gatehouse/backend/approvals"
	"github.com/gatehouse/gatehouse/backend/artifact"
	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/store"
)

// ProposalView is everything the consent dialog shows about a proposal:
// the binding plus the live request's exact details.
type ProposalView struct {
	ID             string             `json:"id"`
	RunID          string             `json:"runId"`
	State          string             `json:"state"`
	CreatedAt      time.Time          `json:"createdAt"`
	ExpiresAt      time.Time          `json:"expiresAt"`
	Agent          AgentRef           `json:"agent"`
	Skill          string             `json:"skill"`
	SkillRoot      string             `json:"skillRoot"`
	Revision       string             `json:"revision"`
	Files          []FileSize         `json:"files"`
	Entrypoint     string             `json:"entrypoint"`
	Runtime        runner.RuntimeInfo `json:"runtime"`
	Workspace      string             `json:"workspace"`
	TimeoutMs      int                `json:"timeoutMs"`
	MaxOutputBytes int                `json:"maxOutputBytes"`
	Invocation     string             `json:"invocation"`
	Warning        string             `json:"warning"`
	// Description is the skill's description from its SKILL.md.
	Description string `json:"description"`
	// Approval relates this revision to the ones the person approved.
	Approval ApprovalView `json:"approval"`

	snap *artifact.Snapshot   // the frozen bytes the run stages (ProposalFile)
	cmp  approvals.Comparison // the comparison behind Approval
}

// AgentRef names an agent.
type AgentRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// FileSize is one staged file.
type FileSize struct {
	Path string `json:"path"`
	Size int    `json:"size"`
}

type activeRun struct {
	RunID     string           `json:"runId"`
	Skill     string           `json:"skill"`
	Agent     string           `json:"agent"`
	State     string           `json:"state"`
	StartedAt time.Time        `json:"startedAt"`
	Progress  *runner.Progress `json:"progress,omitempty"`
	cancel    context.CancelFunc
}

// StartRunArgs asks to run a skill's script.
type StartRunArgs struct {
	Skill     string `json:"skill"`
	Input     string `json:"input"`
	Workspace string `json:"workspace"`
}

// StartRunResult identifies the run.
type StartRunResult struct {
	RunID string `json:"runId"`
}

// StartRun starts a run as the local user. It returns at once; the
// consent proposal (when the policy asks for one), progress and the result
// arrive as events, and the attempt lands in the run history.
func (f *Facade) StartRun(a StartRunArgs) (StartRunResult, error) {
	s, err := f.env.resolveSkill(f.ctx, a.Skill)
	if err != nil {
		return StartRunResult{}, err
	}
	dir := a.Workspace
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return StartRunResult{}, fail("workspace", CategoryIO, err)
		}
	}
	ws, err := runner.ResolveWorkspace(dir)
	if err != nil {
		return StartRunResult{}, errorf("workspace", CategoryInvalid, "%v", err)
	}
	if len(a.Input) > 1<<20 {
		return StartRunResult{}, errorf("input_too_large", CategoryInvalid, "the input is larger than 1 MiB")
	}
	ex := f.env.inspectExecution(s)
	runID := f.consent.StartRun(agents.LocalID)
	req := &consent.Request{AgentID: agents.LocalID, RunID: runID, Skill: s.Name, Execution: ex,
		Invocation: []byte(a.Input), Workspace: ws, Asker: &uiAsker{f: f, root: s.Root.Path, description: s.Frontmatter.Description}}
	if f.env.Pin != nil {
		req.Pin = *f.env.Pin
	}
	ctx, cancel := context.WithCancel(f.ctx)
	untrack := f.trackRun(runID, s.Name, agents.LocalID, cancel)
	go func() {
		defer cancel()
		f.pipeline.Execute(ctx, req)
		f.consent.EndRun(runID)
		untrack()
		f.forgetRunLater(runID)
	}()
	return StartRunResult{RunID: runID}, nil
}

// forgetRunLater drops the proposal, plan and grant views of a run a
// minute after it ended, so a dialog still showing them can finish
// rendering their final state.
func (f *Facade) forgetRunLater(runID string) {
	time.AfterFunc(time.Minute, func() {
		f.proposals.forgetRun(runID)
		f.planViews.forgetRun(runID)
		f.grantViews.forgetRun(runID)
	})
}

// trackRun lists a run in ListRuns.active until the returned function is
// called; cancel is what CancelRun calls.
func (f *Facade) trackRun(runID, skill, agent string, cancel context.CancelFunc) func() {
	f.mu.Lock()
	f.active[runID] = &activeRun{RunID: runID, Skill: skill, Agent: agent, State: "waiting", StartedAt: time.Now().UTC(), cancel: cancel}
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.active, runID)
		f.mu.Unlock()
	}
}

// noteProgress keeps the active-run table current from journal events.
func (f *Facade) noteProgress(e runner.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.active[e.RunID]
	if !ok {
		return
	}
	switch e.Type {
	case runner.EventSpawned:
		r.State = "running"
	case runner.EventProgress:
		var p runner.Progress
		if json.Unmarshal(e.Detail, &p) == nil {
			r.Progress = &p
		}
	}
}

// uiAsker raises the consent dialog and waits for the person's decision.
type uiAsker struct {
	f           *Facade
	root        string
	description string
}

// Ask implements consent.Asker.
func (a *uiAsker) Ask(ctx context.Context, p consent.Proposal, r *consent.Request) error {
	v := proposalView(p, r, a.root)
	v.Warning = consentWarning(ctx, a.f.runner, r.Workspace.Path)
	v.Description = a.description
	v.snap = r.Execution.Snapshot
	v.Approval, v.cmp = approvalView(ctx, a.f.approvals, r)
	if ag, err := a.f.agents.Get(ctx, r.AgentID); err == nil {
		v.Agent.Name = ag.Name
	}
	a.f.proposals.raise(p.ID, v)
	_, err := a.f.consent.Wait(ctx, p.ID)
	if err != nil {
		return err
	}
	return nil
}

func proposalView(p consent.Proposal, r *consent.Request, root string) ProposalView {
	v := ProposalView{ID: p.ID, RunID: p.RunID, State: string(p.State), CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
		Agent: AgentRef{ID: r.AgentID, Name: r.AgentID}, Skill: r.Skill, SkillRoot: root, Revision: r.Execution.Revision,
		Files: []FileSize{}, Runtime: runner.RuntimeInfo{Path: r.Pin.Path, Version: r.Pin.Version},
		Workspace: r.Workspace.Path}
	if m := r.Execution.Manifest; m != nil {
		v.Entrypoint, v.TimeoutMs, v.MaxOutputBytes = m.Entrypoint, m.TimeoutMs, m.MaxOutputBytes
	}
	if snap := r.Execution.Snapshot; snap != nil {
		for _, path := range snap.Paths() {
			b, _ := snap.Bytes(path)
			v.Files = append(v.Files, FileSize{Path: path, Size: len(b)})
		}
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, r.Invocation, "", "  ") == nil {
		v.Invocation = pretty.String()
	} else {
		v.Invocation = string(r.Invocation)
	}
	return v
}

// PendingProposalsResult lists proposals awaiting a decision.
type PendingProposalsResult struct {
	Proposals []ProposalView `json:"proposals"`
}

// PendingProposals lists the proposals the person has not decided yet.
func (f *Facade) PendingProposals(Empty) (PendingProposalsResult, error) {
	return PendingProposalsResult{Proposals: pendingOf(f.proposals, f.consent.Pending(), func(p consent.Proposal) (string, consent.State) { return p.ID, p.State })}, nil
}

// DecideArgs is the person's decision on a proposal.
type DecideArgs struct {
	ProposalID string `json:"proposalId"`
	Approve    bool   `json:"approve"`
}

// Decide records the person's decision on a pending proposal; deciding
// any other is one of the decision errors (docs/api.md) and changes
// nothing.
func (f *Facade) Decide(a DecideArgs) (ProposalView, error) {
	p, err := f.consent.Decide(a.ProposalID, a.Approve)
	return f.proposals.decided(a.ProposalID, p.State, err, nil)
}

// CancelRunArgs names a run.
type CancelRunArgs struct {
	RunID string `json:"runId"`
}

// CancelRunResult says whether a live run was cancelled.
type CancelRunResult struct {
	Cancelled bool `json:"cancelled"`
}

// CancelRun cancels a run started from the UI: a pending proposal is
// cancelled, a running script is terminated with its whole process tree.
func (f *Facade) CancelRun(a CancelRunArgs) (CancelRunResult, error) {
	f.mu.Lock()
	r, ok := f.active[a.RunID]
	f.mu.Unlock()
	if !ok {
		return CancelRunResult{}, nil
	}
	r.cancel()
	return CancelRunResult{Cancelled: true}, nil
}

// ListRunsArgs filters the history.
type ListRunsArgs struct {
	Limit  int    `json:"limit"`
	Status string `json:"status"`
	Skill  string `json:"skill"`
	Agent  string `json:"agent"`
}

// ListRunsResult is the Runs view.
type ListRunsResult struct {
	Runs   []store.RunRecord `json:"runs"`
	Active []activeRun       `json:"active"`
}

// ListRuns returns the history (newest first) and the runs in progress.
func (f *Facade) ListRuns(a ListRunsArgs) (ListRunsResult, error) {
	limit := a.Limit
	if limit <= 0 || limit > 1000 {
		limit = 200
	}
	all, err := f.env.DB.Runs(f.ctx, 1000)
	if err != nil {
		return ListRunsResult{}, fail("database", CategoryIO, err)
	}
	out := ListRunsResult{Runs: []store.RunRecord{}, Active: []activeRun{}}
	for _, r := range all {
		if (a.Status == "" || r.Status == a.Status) && (a.Skill == "" || strings.Contains(r.Skill, a.Skill)) &&
			(a.Agent == "" || strings.Contains(r.Agent, a.Agent)) && len(out.Runs) < limit {
			out.Runs = append(out.Runs, r)
		}
	}
	f.mu.Lock()
	for _, r := range f.active {
		c := *r
		c.cancel = nil
		out.Active = append(out.Active, c)
	}
	f.mu.Unlock()
	return out, nil
}

// RunEventsArgs names an attempt.
type RunEventsArgs struct {
	AttemptID string `json:"attemptId"`
}

// RunEventsResult is an attempt's stored journal.
type RunEventsResult struct {
	Events []store.RunEvent `json:"events"`
}

// RunEvents returns the lifecycle journal stored for one attempt.
func (f *Facade) RunEvents(a RunEventsArgs) (RunEventsResult, error) {
	evs, err := f.env.DB.RunEvents(f.ctx, a.AttemptID)
	if err != nil {
		return RunEventsResult{}, fail("database", CategoryIO, err)
	}
	if evs == nil {
		evs = []store.RunEvent{}
	}
	return RunEventsResult{Events: evs}, nil
}

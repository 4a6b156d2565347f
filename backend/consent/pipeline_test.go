package consent

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/gatehouse/gatehouse/backend/confine"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/agents"
	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/store"
)

// One supervisor, pinned Node, database and runner per test binary.
var (
	pipeDB      *store.DB
	pipeRunner  *runner.Runner
	pipePin     runner.Pin
	pipeJournal *runner.Journal
)

func TestMain(m *testing.M) {
	confine.MaybeLaunch() // this test binary is the launcher of its scripts
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	node, err := runner.FindNode(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if pipePin, err = runner.PinNode(context.Background(), node); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, _ := os.MkdirTemp("", "gatehouse-consent-test-")
	defer os.RemoveAll(dir)
	if pipeDB, err = store.Open(filepath.Join(dir, store.FileName)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pipeDB.Close()
	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer sup.Close()
	pipeSupervisor = sup
	pipeJournal = runner.NewJournal(pipeDB, nil)
	pipeRunner, err = runner.New(runner.Config{Supervisor: sup, RunsDir: filepath.Join(dir, "runs"), Journal: pipeJournal, History: pipeDB})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pipeRunner.Close()
	return m.Run()
}

var pipeSupervisor *proctree.Supervisor

type world struct {
	p      *Pipeline
	pol    *policy.Store
	reg    *agents.Registry
	agent  agents.Agent
	bundle string
	ex     bundle.Execution
	ws     runner.Workspace
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "skill")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: skill\ndescription: d\n---\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripts", "run.mjs"), []byte(`let d='';process.stdin.on('data',c=>d+=c);process.stdin.on('end',()=>process.stdout.write(JSON.stringify({got:JSON.parse(d)})));`), 0o644)
	os.WriteFile(filepath.Join(dir, "execution.json"), []byte(`{"schemaVersion":1,"entrypoint":"scripts/run.mjs","files":["scripts/run.mjs"],
"inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"outputSchema":{"type":"object","properties":{}},"timeoutMs":5000,"maxOutputBytes":1024}`), 0o644)
	ex := bundle.Inspect(dir, bundle.InspectOptions{Runtime: pipePin.Check})
	if !ex.Available {
		t.Fatal(ex.Issues)
	}
	ws, _ := runner.ResolveWorkspace(t.TempDir())
	reg := agents.New(pipeDB, nil)
	agentSeq++
	a, _, err := reg.Add(context.Background(), fmt.Sprintf("agent-%d", agentSeq), true)
	if err != nil {
		t.Fatal(err)
	}
	// Each test gets its own policy key space by resetting the policy.
	pol := policy.NewStore(pipeDB, nil, []byte("pipeline test receipt key 32 byt"))
	if _, err := pol.Set(context.Background(), []byte(`{"mode":"ask","safeMode":false,"trusted":[]}`)); err != nil {
		t.Fatal(err)
	}
	return &world{p: &Pipeline{Policy: pol, Agents: reg, Consent: NewManager(SystemClock()), Runner: pipeRunner, Journal: pipeJournal},
		pol: pol, reg: reg, agent: a, bundle: dir, ex: ex, ws: ws}
}

func (w *world) request(asker Asker) *Request {
	return &Request{AgentID: w.agent.ID, RunID: w.p.Consent.StartRun(w.agent.ID), Skill: "skill", Execution: w.ex,
		Invocation: []byte(`{"n":1}`), Workspace: w.ws, Pin: pipePin, Asker: asker}
}

func (w *world) setPolicy(t *testing.T, doc string) {
	t.Helper()
	if _, err := w.pol.Set(context.Background(), []byte(doc)); err != nil {
		t.Fatal(err)
	}
}

// decideWith answers like a person in a dialog would: through the Manager.
func (w *world) decideWith(approve bool, then func()) Asker {
	return AskerFunc(func(ctx context.Context, p Proposal, r *Request) error {
		if _, err := w.p.Consent.Decide(p.ID, approve); err != nil {
			return err
		}
		if then != nil {
			then()
		}
		return nil
	})
}

var agentSeq int

func (w *world) run(t *testing.T, r *Request) runner.Result {
	return w.p.Execute(context.Background(), r)
}

func wantRefusal(t *testing.T, res runner.Result, code string) {
	t.Helper()
	e := res.Envelope
	if e.Status != runner.StatusRefused || len(e.Errors) == 0 || e.Errors[0].Code != code || e.ExitCode != nil {
		t.Fatalf("want refusal %s, got %s %+v", code, e.Status, e.Errors)
	}
}

func historyRule(t *testing.T, attempt string) (string, string) {
	runs, _ := pipeDB.Runs(context.Background(), 1000)
	for _, r := range runs {
		if r.AttemptID == attempt {
			return r.Status, r.AuthorizedBy
		}
	}
	t.Fatalf("attempt %s missing from history", attempt)
	return "", ""
}

func TestAskApprovedRuns(t *testing.T) {
	w := newWorld(t)
	events, stop := pipeJournal.Subscribe(64)
	defer stop()
	res := w.run(t, w.request(w.decideWith(true, nil)))
	var types []string
	for len(events) > 0 {
		types = append(types, (<-events).Type)
	}
	if strings.Join(types, ",") != "proposed,decided,consumed,staged,spawned,exited,cleaned,validated,completed" {
		t.Fatalf("journal %v", types)
	}
	if res.Envelope.Status != runner.StatusSucceeded {
		t.Fatalf("%+v", res.Envelope)
	}
	if st, rule := historyRule(t, res.Envelope.AttemptID); st != "succeeded" || rule[:6] != "person" {
		t.Fatalf("history %s %s", st, rule)
	}
}

func TestRefusalsCarryTheirRule(t *testing.T) {
	ctx := context.Background()
	t.Run("denied", func(t *testing.T) {
		w := newWorld(t)
		wantRefusal(t, w.run(t, w.request(w.decideWith(false, nil))), "denied")
	})
	t.Run("nobody to ask", func(t *testing.T) {
		w := newWorld(t)
		wantRefusal(t, w.run(t, w.request(nil)), "permission_required")
	})
	t.Run("safe mode", func(t *testing.T) {
		w := newWorld(t)
		w.setPolicy(t, `{"mode":"ask","safeMode":true,"trusted":[]}`)
		res := w.run(t, w.request(w.decideWith(true, nil)))
		wantRefusal(t, res, "safe_mode")
		if _, rule := historyRule(t, res.Envelope.AttemptID); rule != "policy: safe mode" {
			t.Fatalf("rule %q", rule)
		}
	})
	t.Run("blocked", func(t *testing.T) {
		w := newWorld(t)
		w.setPolicy(t, `{"mode":"blocked","safeMode":false,"trusted":[]}`)
		wantRefusal(t, w.run(t, w.request(w.decideWith(true, nil))), "blocked")
	})
	t.Run("capability missing", func(t *testing.T) {
		w := newWorld(t)
		w.reg.SetCanExecute(ctx, w.agent.ID, false)
		wantRefusal(t, w.run(t, w.request(w.decideWith(true, nil))), "capability_missing")
	})
	t.Run("agent disabled", func(t *testing.T) {
		w := newWorld(t)
		w.reg.SetDisabled(ctx, w.agent.ID, true)
		wantRefusal(t, w.run(t, w.request(w.decideWith(true, nil))), "agent_disabled")
	})
	t.Run("invalid input", func(t *testing.T) {
		w := newWorld(t)
		r := w.request(w.decideWith(true, nil))
		r.Invocation = []byte(`{"n":"1"}`)
		wantRefusal(t, w.run(t, r), "invalid_input:type_mismatch")
	})
}

func TestPolicyBlockedBetweenApprovalAndLaunch(t *testing.T) {
	w := newWorld(t)
	var id string
	asker := AskerFunc(func(ctx context.Context, p Proposal, r *Request) error {
		id = p.ID
		w.p.Consent.Decide(p.ID, true)
		w.setPolicy(t, `{"mode":"blocked","safeMode":false,"trusted":[]}`)
		return nil
	})
	wantRefusal(t, w.run(t, w.request(asker)), "blocked")
	if p, _ := w.p.Consent.Get(id); p.State != PolicyRefused {
		t.Fatalf("proposal %s", p.State)
	}
}

func TestWorkspaceSwappedForSymlinkAfterApproval(t *testing.T) {
	w := newWorld(t)
	other := t.TempDir()
	asker := AskerFunc(func(ctx context.Context, p Proposal, r *Request) error {
		w.p.Consent.Decide(p.ID, true)
		os.Rename(w.ws.Path, w.ws.Path+".moved")
		os.Symlink(other, w.ws.Path)
		return nil
	})
	wantRefusal(t, w.run(t, w.request(asker)), "binding_changed")
}

func TestTrustedScopeRunsWithoutAsking(t *testing.T) {
	w := newWorld(t)
	scope := func(timeout int) string {
		return fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":false,"trusted":[{"revision":%q,"agentId":%q,"workspace":%q,"timeoutMsCeiling":%d,"maxOutputBytesCeiling":1024}]}`,
			w.ex.Revision, w.agent.ID, w.ws.Path, timeout)
	}
	w.setPolicy(t, scope(5000))
	res := w.run(t, w.request(nil)) // nobody to ask, and no need to
	if res.Envelope.Status != runner.StatusSucceeded {
		t.Fatalf("%+v", res.Envelope)
	}
	if _, rule := historyRule(t, res.Envelope.AttemptID); rule[:13] != "trusted scope" {
		t.Fatalf("rule %q", rule)
	}
	// A ceiling below the bundle's limits does not match: back to asking.
	w.setPolicy(t, scope(4000))
	wantRefusal(t, w.run(t, w.request(nil)), "permission_required")
	// A draft (saved in ask mode) never matches.
	w.setPolicy(t, `{"mode":"ask","safeMode":false,"trusted":[]}`)
	draft := scope(5000)
	var doc map[string]any
	json.Unmarshal([]byte(draft), &doc)
	doc["mode"] = "ask"
	b, _ := json.Marshal(doc)
	w.setPolicy(t, string(b))
	wantRefusal(t, w.run(t, w.request(nil)), "permission_required")
}

func TestWorkflowMode(t *testing.T) {
	w := newWorld(t)
	w.setPolicy(t, `{"mode":"workflow","safeMode":false,"trusted":[]}`)
	r := w.request(nil)
	wantRefusal(t, w.run(t, r), "workflow_authorization_missing")
	b := r.Binding()
	plan, err := w.p.Consent.ProposePlan(r.RunID, r.AgentID, []Step{{Skill: b.Skill, Revision: b.Revision, InvocationDigest: b.InvocationDigest, Workspace: b.Workspace}})
	if err != nil {
		t.Fatal(err)
	}
	var approved []string
	w.p.OnApproved = func(_ context.Context, r *Request) { approved = append(approved, r.Execution.Revision) }
	w.p.Consent.DecidePlan(plan.ID, true)
	if res := w.run(t, r); res.Envelope.Status != runner.StatusSucceeded {
		t.Fatalf("planned step: %+v", res.Envelope)
	}
	// The person approved this revision in the plan: the approval
	// history records it, once, when its step is taken.
	if len(approved) != 1 || approved[0] != b.Revision {
		t.Fatalf("OnApproved for the planned step: %v, want [%s]", approved, b.Revision)
	}
	wantRefusal(t, w.run(t, r), "off_plan") // each step once
	if len(approved) != 1 {
		t.Fatalf("an off-plan run was recorded as approved: %v", approved)
	}
	r.Invocation = []byte(`{"n":2}`)
	wantRefusal(t, w.run(t, r), "off_plan")
}

// A trusted scope approved under full confinement does not match a run the
// current Security setting would confine less: the person is asked.
func TestTrustedScopeRequiresItsConfinement(t *testing.T) {
	w := newWorld(t)
	full, err := pipeRunner.Confinement(confine.Default())
	if err != nil {
		t.Skip(err)
	}
	w.p.ScopeConfinement = func(context.Context, string) (*confine.Report, error) { return full, nil }
	w.setPolicy(t, fmt.Sprintf(`{"mode":"trusted_revisions","safeMode":false,"trusted":[{"revision":%q,"agentId":%q,"workspace":%q,"timeoutMsCeiling":5000,"maxOutputBytesCeiling":1024}]}`,
		w.ex.Revision, w.agent.ID, w.ws.Path))
	if res := w.run(t, w.request(nil)); res.Envelope.Status != runner.StatusSucceeded {
		t.Fatalf("confined as approved: %+v", res.Envelope)
	}
	weaker, err := runner.New(runner.Config{Supervisor: pipeSupervisor, RunsDir: t.TempDir(), Journal: pipeJournal, History: pipeDB,
		Confinement: confine.Settings{Filesystem: confine.FilesystemOff, Network: confine.NetworkAllow}})
	if err != nil {
		t.Fatal(err)
	}
	w.p.Runner = weaker
	wantRefusal(t, w.run(t, w.request(nil)), "permission_required")
}

// TestUndecidedProposalIsNotThePersons: a request that expired (or was
// cancelled) before anyone decided is refused, and the history never says
// a person decided it.
func TestUndecidedProposalIsNotThePersons(t *testing.T) {
	for _, c := range []struct {
		state State
		end   func(m *Manager, clock *fakeClock, p Proposal)
	}{
		{Expired, func(m *Manager, clock *fakeClock, p Proposal) { clock.Advance(Window+time.Second, 0); m.Get(p.ID) }},
		{Cancelled, func(m *Manager, _ *fakeClock, p Proposal) { m.EndRun(p.RunID) }},
	} {
		t.Run(string(c.state), func(t *testing.T) {
			w := newWorld(t)
			clock := &fakeClock{wall: time.Now()}
			w.p.Consent = NewManager(clock)
			asker := AskerFunc(func(ctx context.Context, p Proposal, r *Request) error {
				c.end(w.p.Consent, clock, p)
				return nil
			})
			res := w.run(t, w.request(asker))
			wantRefusal(t, res, string(c.state))
			if _, rule := historyRule(t, res.Envelope.AttemptID); strings.HasPrefix(rule, "person") {
				t.Fatalf("an undecided %s proposal is recorded as %q", c.state, rule)
			}
		})
	}
}

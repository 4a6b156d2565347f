package app

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gatehouse/gatehouse/backend/agents"
	"github.com/gatehouse/gatehouse/backend/approvals"
	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/runner"
)

// Facade is the UI's whole API: every exported method is bound to the
// desktop window by Wails and served by the browser bridge as
// POST /api/<Method>, so the two surfaces cannot drift apart. Each method
// takes one argument struct and returns a result and an error; errors are
// *CLIError values carrying a stable code. See docs/api.md.
type Facade struct {
	env       *Env
	shell     string
	sup       *proctree.Supervisor
	runner    *runner.Runner
	journal   *runner.Journal
	consent   *consent.Manager
	pipeline  *consent.Pipeline
	policy    *policy.Store
	agents    *agents.Registry
	approvals *approvals.Book // revisions the person approved, per skill
	events    *hub

	// What the dialogs show about each request, by request id
	// (pending_views.go).
	proposals  *pendingViews[ProposalView]
	planViews  *pendingViews[PlanView]
	grantViews *pendingViews[GrantView]

	ctx    context.Context
	cancel context.CancelFunc

	firstCall     chan struct{} // closed by the first AppInfo call (desktop smoke test)
	firstCallOnce sync.Once

	mu        sync.Mutex
	active    map[string]*activeRun // runs started from the UI, by run id
	captures  uiCaptures            // captures started from the UI (StartCapture)
	renderers aheadRenderers        // renderer helpers started ahead of captures
	digests   fileDigests           // SHA-256 of saved Evidence files, while unchanged (library signatures)
	stop      []func()
	closed    bool // close has run: onClose runs its stop at once
}

// newFacade wires the backend for a long-running shell ("browser" or
// "desktop"): it owns the process supervisor, the runner and the consent
// state until close.
func newFacade(env *Env, shell string, window consentWindow) (*Facade, error) {
	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		return nil, err
	}
	f := &Facade{env: env, shell: shell, sup: sup, events: newHub(), firstCall: make(chan struct{}), active: map[string]*activeRun{}}
	f.proposals = newPendingViews("proposal", f.events, func(v *ProposalView) string { return v.RunID },
		func(v *ProposalView, s consent.State) { v.State = string(s) })
	f.planViews = newPendingViews("plan", f.events, func(v *PlanView) string { return v.RunID },
		func(v *PlanView, s consent.State) { v.State = string(s) })
	f.grantViews = newPendingViews("grant", f.events, func(v *GrantView) string { return v.RunID },
		func(v *GrantView, s consent.State) { v.State = string(s) })
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.journal = runner.NewJournal(env.DB, func(err error) { fmt.Fprintf(env.Stderr, "gatehouse: warning: %v\n", err) })
	f.runner, err = runner.New(runner.Config{Supervisor: sup, RunsDir: env.RunsDir(), Journal: f.journal, History: env.DB, Settings: env.Confinement})
	if err != nil {
		sup.Close()
		return nil, err
	}
	clock := consent.SystemClock()
	if window.clock != nil {
		clock = window.clock
	}
	f.consent = consent.NewManager(clock)
	f.policy = env.PolicyStore()
	f.agents = agents.New(env.DB, nil)
	f.approvals = approvals.Open(env.DB, nil)
	f.pipeline = &consent.Pipeline{Policy: f.policy, Agents: f.agents, Consent: f.consent, Runner: f.runner, Journal: f.journal,
		ScopeConfinement: scopeConfinement(env, f.runner), OnApproved: approvalRecorder(env)}
	f.forwardEvents()
	f.stop = append(f.stop, f.captures.stop, func() { env.lib().Wait() }) // the library's background verification (f.ctx is cancelled first)
	f.stop = append(f.stop, f.renderers.close)                            // after the captures, which may still take a helper
	go env.verifierID()                                                   // hashed ahead of the first Evidence read
	go f.startRenderersAhead()
	return f, nil
}

// startRenderersAhead starts a renderer helper ahead of the first
// capture when captures are enabled (otherwise the first capture starts
// the helpers started ahead of the next ones); a pin that does not check
// out is reported by that capture.
func (f *Facade) startRenderersAhead() {
	pol, err := loadCapturePolicy(f.ctx, f.env)
	if err != nil || !pol.Enabled {
		return
	}
	if rh, err := rendererHelper(f.env, f.sup); err == nil {
		f.renderers.get(rh)
	}
}

// consentWindow lets test builds shorten the consent window; production
// builds always use the real clock (see testhooks_e2e.go).
type consentWindow struct{ clock consent.Clock }

// watchFirstCall returns a channel closed when the UI first calls AppInfo.
func (f *Facade) watchFirstCall() <-chan struct{} { return f.firstCall }

// close ends every UI run, waits for attempts to finish and releases the
// supervisor.
func (f *Facade) close() {
	f.mu.Lock()
	for _, r := range f.active {
		r.cancel()
	}
	stops := f.stop
	f.stop, f.closed = nil, true
	f.mu.Unlock()
	f.cancel()
	for _, s := range stops {
		s()
	}
	f.runner.Close()
	f.sup.Close()
}

// onClose registers stop to run when the facade closes; once it has
// closed (a window callback racing the end of the desktop loop), stop runs
// at once, so what it stops (a listener, the runtime file) never outlives
// the facade.
func (f *Facade) onClose(stop func()) {
	f.mu.Lock()
	closed := f.closed
	if !closed {
		f.stop = append(f.stop, stop)
	}
	f.mu.Unlock()
	if closed {
		stop()
	}
}

// forwardEvents turns journal and consent events into UI events.
func (f *Facade) forwardEvents() {
	runs, stopRuns := f.journal.Subscribe(256)
	props, stopProps := f.consent.Subscribe(256)
	f.onClose(stopRuns)
	f.onClose(stopProps)
	go func() {
		for e := range runs {
			f.noteProgress(e)
			f.events.publish("run", e)
		}
	}()
	go func() {
		for e := range props {
			f.noteConsent(e)
		}
	}()
}

// fail converts backend errors into structured API errors.
func fail(code, category string, err error) error {
	var ce *CLIError
	if errors.As(err, &ce) {
		return ce
	}
	return &CLIError{Code: code, Category: category, Message: err.Error()}
}

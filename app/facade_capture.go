package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse/gatehouse/backend/agents"
	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/library"
	"github.com/gatehouse/gatehouse/backend/policy"
)

// maxUICaptures is how many captures started from the UI may run at once.
const maxUICaptures = 4

// captureTick is how often a running UI capture reports its progress.
const captureTick = 250 * time.Millisecond

// StartCaptureArgs is a scenario written in the Evidence library's editor.
type StartCaptureArgs struct {
	// Scenario is the exact text of a Process Capture v4 scenario
	// (docs/formats/capture-record.md), at most capture.MaxScenarioBytes.
	Scenario string `json:"scenario"`
}

// StartCaptureResult names a capture that is now running.
type StartCaptureResult struct {
	CaptureID string `json:"capture_id"`
	// Command is the executable and its arguments, for the progress line.
	Command string `json:"command"`
	// TimeoutMS is the scenario's time limit: the capture ends by then.
	TimeoutMS int64 `json:"timeout_ms"`
}

// CaptureEvent is the "capture" event: the progress and outcome of a
// capture started with StartCapture. State is running (with ElapsedMS),
// saving (recorded; sealing, saving and verifying the Evidence), done
// (EvidenceID is saved and verified), failed (Error) or cancelled.
type CaptureEvent struct {
	CaptureID  string        `json:"capture_id"`
	State      string        `json:"state"`
	ElapsedMS  int64         `json:"elapsed_ms"`
	TimeoutMS  int64         `json:"timeout_ms"`
	EvidenceID string        `json:"evidence_id,omitempty"`
	Error      *CaptureError `json:"error,omitempty"`
}

// CaptureError is why a UI capture failed or stopped, in the shape of the
// API's structured errors.
type CaptureError struct {
	Code     string `json:"code"`
	Category string `json:"category"`
	Message  string `json:"message"`
	Details  any    `json:"details,omitempty"`
}

func captureErrorOf(err error) *CaptureError {
	var ce *CLIError
	if errors.As(err, &ce) {
		return &CaptureError{Code: ce.Code, Category: ce.Category, Message: ce.Message, Details: ce.Details}
	}
	return &CaptureError{Code: "capture_failed", Category: CategoryInternal, Message: err.Error()}
}

// uiCaptures tracks the captures started from the UI; its zero value is
// ready to use. Once stop has run it admits no capture, so nothing is
// added to wg while stop waits on it.
type uiCaptures struct {
	mu      sync.Mutex
	running map[string]context.CancelFunc
	wg      sync.WaitGroup
	stopped bool
}

// StartCapture runs a scenario as the local user, like `gatehouse
// capture-process`: the scenario is parsed strictly (error invalid_scenario,
// every failing path in details), the operator policy and safe mode are
// checked (their refusal codes; nothing runs), and the capture starts in
// the background. Running it from the app is the person's approval, so
// auto-grant does not apply. Progress, then the outcome, arrive as
// "capture" events; a finished capture is sealed as Evidence, saved into
// the library and verified before "done" names it. CancelCapture ends it.
func (f *Facade) StartCapture(a StartCaptureArgs) (StartCaptureResult, error) {
	sc, issues := capture.ParseScenario([]byte(a.Scenario))
	if len(issues) > 0 {
		return StartCaptureResult{}, &CLIError{Code: "invalid_scenario", Category: CategoryInvalid, Details: issues,
			Message: fmt.Sprintf("the scenario has %d issue(s); nothing was run", len(issues))}
	}
	pol, err := loadCapturePolicy(f.ctx, f.env)
	if err != nil {
		return StartCaptureResult{}, err
	}
	if reason, msg := pol.CheckCapture(sc.PolicyRequest()); reason != "" {
		return StartCaptureResult{}, policyRefusal(reason, msg)
	}
	if err := f.pipeline.AdmitCapture(f.ctx, agents.LocalID, "", sc.Executable); err != nil {
		return StartCaptureResult{}, &CLIError{Code: consent.Code(err), Category: "permission", Message: err.Error() + "; nothing was run",
			Details: map[string]string{"reason": consent.Code(err)}}
	}
	id := "cap_" + strings.ToLower(rand.Text())
	ctx, cancel := context.WithCancel(f.ctx)
	c := &f.captures
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		cancel()
		return StartCaptureResult{}, &CLIError{Code: "shutting_down", Category: CategoryUnavailable,
			Message: "Gatehouse is closing; the capture was not started"}
	}
	if len(c.running) >= maxUICaptures {
		c.mu.Unlock()
		cancel()
		return StartCaptureResult{}, &CLIError{Code: "too_many_captures", Category: CategoryInvalid,
			Message: fmt.Sprintf("%d captures are already running; wait for one to finish or cancel it", maxUICaptures)}
	}
	if c.running == nil {
		c.running = map[string]context.CancelFunc{}
	}
	c.running[id] = cancel
	c.wg.Add(1)
	c.mu.Unlock()
	res := StartCaptureResult{CaptureID: id, Command: strictTruncate(strings.Join(append([]string{sc.Executable}, sc.Arguments...), " "), 300), TimeoutMS: int64(sc.TimeoutMS)}
	go f.runUICapture(ctx, id, sc, pol, res.TimeoutMS)
	return res, nil
}

func (f *Facade) runUICapture(ctx context.Context, id string, sc *capture.Scenario, pol policy.CaptureSettings, timeoutMS int64) {
	c := &f.captures
	defer c.wg.Done()
	defer func() {
		c.mu.Lock()
		if cancel, ok := c.running[id]; ok {
			cancel()
			delete(c.running, id)
		}
		c.mu.Unlock()
	}()
	begin := time.Now()
	ev := func(state string) CaptureEvent {
		return CaptureEvent{CaptureID: id, State: state, ElapsedMS: time.Since(begin).Milliseconds(), TimeoutMS: timeoutMS}
	}
	f.events.publish("capture", ev("running"))
	stopTicks := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		t := time.NewTicker(captureTick)
		defer t.Stop()
		for {
			select {
			case <-stopTicks:
				return
			case <-t.C:
				f.events.publish("capture", ev("running"))
			}
		}
	}()
	_, env, out, _, err := captureAndSave(ctx, f.env, f.sup, &f.renderers, sc, pol)
	close(stopTicks)
	<-ticked
	if err == nil {
		f.events.publish("capture", ev("saving"))
		err = checkSaved(f.ctx, f.env.lib(), env.EvidenceID, out)
	}
	e := ev("done")
	switch {
	case err == nil:
		e.EvidenceID = env.EvidenceID
	case codeOf(err) == "cancelled":
		e.State = "cancelled"
		e.Error = captureErrorOf(err)
	default:
		e.State = "failed"
		e.Error = captureErrorOf(err)
	}
	f.events.publish("capture", e)
}

// checkSaved reads the Evidence file id back as saved and verifies what
// it read: the bytes must be out, which library.Save verified in full
// before it wrote and marked them, so this costs a read, a comparison and
// a hash (the verified cache). A file that is missing, or whose bytes are
// not the ones saved, is evidence_integrity_mismatch.
func checkSaved(ctx context.Context, lib *library.Library, id string, out []byte) error {
	mismatch := func(why string, details any) error {
		return &CLIError{Code: "evidence_integrity_mismatch", Category: CategoryInternal, Details: details,
			Message: fmt.Sprintf("the capture was saved as %s but %s", id, why)}
	}
	data, err := library.ReadBounded(lib.Path(id), evidence.MaxEnvelopeBytes)
	if err != nil {
		return mismatch(fmt.Sprintf("its file cannot be read back: %v", err), nil)
	}
	if !bytes.Equal(data, out) {
		return mismatch(fmt.Sprintf("its file on disk (%d bytes) is not the %d bytes saved", len(data), len(out)), nil)
	}
	if _, issues := lib.VerifySaved(ctx, id, data); len(issues) > 0 {
		return mismatch(fmt.Sprintf("does not verify: %d failing path(s)", len(issues)), issues)
	}
	return nil
}

// CancelCaptureArgs names a capture started with StartCapture.
type CancelCaptureArgs struct {
	CaptureID string `json:"capture_id"`
}

// CancelCaptureResult confirms the request.
type CancelCaptureResult struct {
	Cancelled bool `json:"cancelled"`
}

// CancelCapture stops a running UI capture: its processes are ended and
// its temporary files removed, nothing is saved, and a "capture" event in
// state cancelled follows. An unknown or finished capture is error
// capture_not_found.
func (f *Facade) CancelCapture(a CancelCaptureArgs) (CancelCaptureResult, error) {
	c := &f.captures
	c.mu.Lock()
	cancel, ok := c.running[a.CaptureID]
	c.mu.Unlock()
	if !ok {
		return CancelCaptureResult{}, &CLIError{Code: "capture_not_found", Category: CategoryNotFound,
			Details: []evidenceIssue{{Code: "invalid_value", Path: "$.capture_id", Message: "no running capture has this id"}},
			Message: fmt.Sprintf("no running capture %q", strictTruncate(a.CaptureID, 80))}
	}
	cancel()
	return CancelCaptureResult{Cancelled: true}, nil
}

// stop cancels every UI capture, refuses new ones and waits for the
// running ones to clean up.
func (c *uiCaptures) stop() {
	c.mu.Lock()
	c.stopped = true
	for _, cancel := range c.running {
		cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

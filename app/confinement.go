package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/store"
)

// keyConfinement holds the Security setting (confine.Settings) in the
// app-settings namespace; absent means confine.Default().
const keyConfinement = "security-confinement"

// Confinement returns the stored Security setting, or the default when
// none was stored. A stored value that does not validate is an error,
// never silently replaced.
func (e *Env) Confinement(ctx context.Context) (confine.Settings, error) {
	raw, err := e.DB.Get(ctx, nsApp, keyConfinement)
	if errors.Is(err, store.ErrNotFound) {
		return confine.Default(), nil
	}
	if err != nil {
		return confine.Settings{}, err
	}
	var s confine.Settings
	if err := json.Unmarshal(raw, &s); err != nil {
		return confine.Settings{}, fmt.Errorf("stored Security setting is unreadable: %w", err)
	}
	if err := s.Validate(); err != nil {
		return confine.Settings{}, fmt.Errorf("stored Security setting: %w", err)
	}
	return s, nil
}

// SetConfinement validates and stores the Security setting.
func (e *Env) SetConfinement(ctx context.Context, s confine.Settings) error {
	if err := s.Validate(); err != nil {
		return &CLIError{Code: "invalid_setting", Category: CategoryInvalid, Message: err.Error()}
	}
	b, _ := json.Marshal(s)
	return e.DB.Put(ctx, nsApp, keyConfinement, b)
}

// consentWarning is the dialog's warning for a run in workspace under the
// current Security setting and the runner's ownership mechanism.
func consentWarning(ctx context.Context, rn *runner.Runner, workspace string) string {
	_, why := rn.Ownership()
	settings, err := rn.CurrentConfinement(ctx)
	var rep *confine.Report
	if err == nil {
		rep, err = rn.Confinement(settings)
	}
	return warningText(rep, err, workspace, why)
}

// warningText states exactly what the launcher will enforce when it
// enforces all of it (docs/process-ownership.md), the full-trust warning
// otherwise with what is off or unavailable; it promises that Gatehouse
// ends every process only when the ownership mechanism cannot be escaped
// (unverifiable is "").
func warningText(rep *confine.Report, err error, workspace, unverifiable string) string {
	ends := "Gatehouse bounds its time and output and ends every process it starts."
	if unverifiable != "" {
		ends = "Gatehouse bounds its time and output, but cannot prove that every process it starts has ended (" + unverifiable + ")."
	}
	if err == nil && rep.Confined() {
		return "This script is confined: can write only " + visibleLine(workspace) + " and its own temporary folder; no network.\n" + ends
	}
	w := "This script runs with YOUR full permissions: it can read and change your files,\n" +
		"use the network and start programs. " + ends + "\nApprove only code you trust."
	switch {
	case confine.IsUnavailable(err):
		w += "\nConfinement is unavailable on this machine (" + err.Error() + "): the run will be refused unless confinement is turned off in Security settings."
	case err != nil:
		w += "\n" + err.Error()
	default:
		w += "\nConfinement: " + rep.Summary() + "."
	}
	return w
}

// planWarning is the warning of a plan: the one of its steps when they all
// share a workspace, else each step's.
func planWarning(ctx context.Context, rn *runner.Runner, steps []PlanStepView) string {
	seen := map[string]bool{}
	var w string
	for _, s := range steps {
		if seen[s.Workspace] {
			continue
		}
		seen[s.Workspace] = true
		if w != "" {
			w += "\n\n"
		}
		w += consentWarning(ctx, rn, s.Workspace)
	}
	return w
}

// SecurityView is the Security setting with what this machine enforces
// for it and how attempts are owned.
type SecurityView struct {
	Confinement confine.Settings `json:"confinement"`
	// Enforcement is what a launch would enforce now (nil when it would be
	// refused; Unavailable says why).
	Enforcement *confine.Report `json:"enforcement"`
	Unavailable string          `json:"unavailable,omitempty"`
	// Confined is the consent dialog's test (confine.Report.Confined): true
	// only when a launch now would enforce the filesystem, TCP and UDP
	// confinement, so the UI never decides it from the lists itself.
	Confined bool `json:"confined"`
	// Ownership is the process-tree mechanism; OwnershipUnverifiable says
	// why cleanup cannot be verified ("" when it can).
	Ownership             string `json:"ownership"`
	OwnershipUnverifiable string `json:"ownershipUnverifiable,omitempty"`
}

func securityView(ctx context.Context, env *Env, rn *runner.Runner) (SecurityView, error) {
	s, err := env.Confinement(ctx)
	if err != nil {
		return SecurityView{}, err
	}
	v := SecurityView{Confinement: s}
	v.Ownership, v.OwnershipUnverifiable = rn.Ownership()
	if v.Enforcement, err = rn.Confinement(s); err != nil {
		v.Unavailable = err.Error()
	} else {
		v.Confined = v.Enforcement.Confined()
	}
	return v, nil
}

// GetSecurity returns the Security setting and what it enforces here.
func (f *Facade) GetSecurity(Empty) (SecurityView, error) {
	v, err := securityView(f.ctx, f.env, f.runner)
	if err != nil {
		return SecurityView{}, fail("settings", CategoryIO, err)
	}
	return v, nil
}

// SetSecurity validates and stores the Security setting; an invalid one
// changes nothing.
func (f *Facade) SetSecurity(s confine.Settings) (SecurityView, error) {
	if err := f.env.SetConfinement(f.ctx, s); err != nil {
		var ce *CLIError
		if errors.As(err, &ce) {
			return SecurityView{}, ce
		}
		return SecurityView{}, fail("settings", CategoryIO, err)
	}
	f.events.publish("settings", map[string]string{"what": "security"})
	return f.GetSecurity(Empty{})
}

// nsScopeConfinement records, by receipt id, the confinement report a
// trusted scope was approved under.
const nsScopeConfinement = "scope-confinement"

// recordScopeConfinement records the confinement a launch would get now
// for every approved trusted scope of pol that has no record yet (the
// policy was just saved, so those were approved under the current
// setting).
func recordScopeConfinement(ctx context.Context, env *Env, rn *runner.Runner, pol policy.Execution) error {
	settings, err := rn.CurrentConfinement(ctx)
	if err != nil {
		return err
	}
	rep, err := rn.Confinement(settings)
	if err != nil {
		// Unenforceable now: record nothing stronger than what runs get
		// (they are refused until the setting changes).
		rep = &confine.Report{Filesystem: settings.Filesystem, Network: settings.Network, Enforced: []string{}, NotEnforced: []string{}}
	}
	b, _ := json.Marshal(rep)
	for _, s := range pol.Trusted {
		if !s.Approved() {
			continue
		}
		if _, err := env.DB.Get(ctx, nsScopeConfinement, *s.ReceiptID); err == nil {
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := env.DB.Put(ctx, nsScopeConfinement, *s.ReceiptID, b); err != nil {
			return err
		}
	}
	return nil
}

// scopeConfinement is the consent pipeline's lookup of the confinement a
// trusted scope was approved under. A scope approved before confinement
// was recorded is held to the default setting's confinement.
func scopeConfinement(env *Env, rn *runner.Runner) func(ctx context.Context, receipt string) (*confine.Report, error) {
	return func(ctx context.Context, receipt string) (*confine.Report, error) {
		raw, err := env.DB.Get(ctx, nsScopeConfinement, receipt)
		if errors.Is(err, store.ErrNotFound) {
			return rn.Confinement(confine.Default())
		}
		if err != nil {
			return nil, err
		}
		var rep confine.Report
		if err := json.Unmarshal(raw, &rep); err != nil {
			return nil, fmt.Errorf("recorded confinement of scope %s is unreadable: %w", receipt, err)
		}
		return &rep, nil
	}
}

package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gatehouse/gatehouse/backend/agents"
	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/store"
)

// MaxSkillRoots bounds the settings skill roots.
const MaxSkillRoots = 32

// GetPolicy returns the execution policy.
// A stored value that no longer validates (corrupted, hand-edited, or with
// a receipt Gatehouse cannot verify) is the error policy_invalid with the
// field issues: every script is refused until a valid policy is saved.
func (f *Facade) GetPolicy(Empty) (policy.Execution, error) {
	p, err := f.policy.Get(f.ctx)
	var se *policy.StoredPolicyError
	if errors.As(err, &se) {
		return policy.Execution{}, &CLIError{Code: "policy_invalid", Category: CategoryIO, Message: se.Error(), Details: se.Fields}
	}
	if err != nil {
		return policy.Execution{}, fail("policy", CategoryIO, err)
	}
	return p, nil
}

// SetPolicyArgs carries a whole policy.
type SetPolicyArgs struct {
	Policy json.RawMessage `json:"policy"`
}

// SetPolicy validates and stores the whole policy, issuing receipts; a
// rejected policy changes nothing and reports every field error.
func (f *Facade) SetPolicy(a SetPolicyArgs) (policy.Execution, error) {
	p, err := f.policy.Set(f.ctx, a.Policy)
	var ve *policy.ValidationError
	if errors.As(err, &ve) {
		return policy.Execution{}, &CLIError{Code: "invalid_policy", Category: CategoryInvalid, Message: ve.Error(), Details: ve.Fields}
	}
	if err != nil {
		return policy.Execution{}, fail("policy", CategoryIO, err)
	}
	if err := recordScopeConfinement(f.ctx, f.env, f.runner, p); err != nil {
		return policy.Execution{}, fail("policy", CategoryIO, err)
	}
	f.events.publish("settings", map[string]string{"what": "policy"})
	return p, nil
}

// ListAgentsResult lists agents.
type ListAgentsResult struct {
	Agents []agents.Agent `json:"agents"`
}

// ListAgents returns the local identity and every registered agent.
func (f *Facade) ListAgents(Empty) (ListAgentsResult, error) {
	list, err := f.agents.List(f.ctx)
	if err != nil {
		return ListAgentsResult{}, agentError(err)
	}
	return ListAgentsResult{Agents: list}, nil
}

// AddAgentArgs creates an agent.
type AddAgentArgs struct {
	Name             string `json:"name"`
	CanExecuteSkills bool   `json:"canExecuteSkills"`
}

// AddAgentResult carries the new agent and its token, shown this once,
// with the MCP client configuration for it: the same snippets `gatehouse
// agent add` prints.
type AddAgentResult struct {
	Agent   agents.Agent      `json:"agent"`
	Token   string            `json:"token"`
	Connect agents.Connection `json:"connect"`
}

// AddAgent registers an agent; its token is returned once and only its
// hash is kept.
func (f *Facade) AddAgent(a AddAgentArgs) (AddAgentResult, error) {
	ag, token, err := f.agents.Add(f.ctx, a.Name, a.CanExecuteSkills)
	if err != nil {
		return AddAgentResult{}, agentError(err)
	}
	f.events.publish("settings", map[string]string{"what": "agents"})
	return AddAgentResult{Agent: ag, Token: token, Connect: agentConnection(f.env, token)}, nil
}

// SetAgentDisabledArgs enables or disables an agent.
type SetAgentDisabledArgs struct {
	ID       string `json:"id"`
	Disabled bool   `json:"disabled"`
}

// SetAgentDisabled disables or re-enables an agent.
func (f *Facade) SetAgentDisabled(a SetAgentDisabledArgs) (agents.Agent, error) {
	if err := f.agents.SetDisabled(f.ctx, a.ID, a.Disabled); err != nil {
		return agents.Agent{}, agentError(err)
	}
	f.events.publish("settings", map[string]string{"what": "agents"})
	ag, err := f.agents.Get(f.ctx, a.ID)
	if err != nil {
		return agents.Agent{}, agentError(err)
	}
	return ag, nil
}

// RemoveAgentArgs names an agent.
type RemoveAgentArgs struct {
	ID string `json:"id"`
}

// RemoveAgentResult confirms a removal.
type RemoveAgentResult struct {
	Removed bool `json:"removed"`
}

// RemoveAgent deletes an agent; its token stops working at once.
func (f *Facade) RemoveAgent(a RemoveAgentArgs) (RemoveAgentResult, error) {
	if err := f.agents.Remove(f.ctx, a.ID); err != nil {
		return RemoveAgentResult{}, agentError(err)
	}
	f.events.publish("settings", map[string]string{"what": "agents"})
	return RemoveAgentResult{Removed: true}, nil
}

// RuntimeResult describes the pinned Node runtime.
type RuntimeResult struct {
	Pin     *runner.Pin `json:"pin"`
	OK      bool        `json:"ok"`
	Problem string      `json:"problem,omitempty"`
}

// GetRuntime returns the pin and whether the pinned file still matches.
func (f *Facade) GetRuntime(Empty) (RuntimeResult, error) {
	return f.runtimeResult(), nil
}

func (f *Facade) runtimeResult() RuntimeResult {
	r := RuntimeResult{Pin: f.env.Pin}
	switch {
	case f.env.PinErr != nil:
		r.Problem = f.env.PinErr.Error()
	case f.env.Pin == nil:
		r.Problem = "no Node runtime is pinned"
	default:
		if err := f.env.Pin.Check(); err != nil {
			r.Problem = err.Error()
		} else {
			r.OK = true
		}
	}
	return r
}

// RepinRuntimeArgs optionally names the Node binary to pin.
type RepinRuntimeArgs struct {
	Path string `json:"path"`
}

// RepinRuntime pins the Node at path (or the one found on PATH) anew.
func (f *Facade) RepinRuntime(a RepinRuntimeArgs) (RuntimeResult, error) {
	path := a.Path
	if path == "" {
		var err error
		if path, err = runner.FindNode(f.env.Getenv); err != nil {
			return RuntimeResult{}, errorf("runtime", CategoryNotFound, "%v", err)
		}
	}
	if !filepath.IsAbs(path) {
		return RuntimeResult{}, errorf("runtime", CategoryInvalid, "the runtime path must be absolute")
	}
	pin, err := f.runner.Pin(f.ctx, path)
	if err != nil {
		return RuntimeResult{}, errorf("runtime", CategoryInvalid, "%v", err)
	}
	b, _ := json.Marshal(pin)
	if err := f.env.DB.Put(f.ctx, nsApp, keyNodeRuntime, b); err != nil {
		return RuntimeResult{}, fail("runtime", CategoryIO, err)
	}
	f.env.Pin, f.env.PinErr = &pin, nil
	f.events.publish("settings", map[string]string{"what": "runtime"})
	return f.runtimeResult(), nil
}

// SkillRootsResult lists the skill roots.
type SkillRootsResult struct {
	Bundled string   `json:"bundled"`
	Roots   []string `json:"roots"`
}

// GetSkillRoots returns the bundled root and the settings roots.
func (f *Facade) GetSkillRoots(Empty) (SkillRootsResult, error) {
	roots, err := f.env.UserRoots(f.ctx)
	if err != nil {
		return SkillRootsResult{}, fail("settings", CategoryIO, err)
	}
	return SkillRootsResult{Bundled: f.env.BundledDir(), Roots: roots}, nil
}

// SetSkillRootsArgs replaces the settings roots.
type SetSkillRootsArgs struct {
	Roots []string `json:"roots"`
}

// SetSkillRoots validates every root (absolute, clean, an existing real
// directory, no duplicates, at most MaxSkillRoots) and replaces the list;
// any error rejects the whole list.
func (f *Facade) SetSkillRoots(a SetSkillRootsArgs) (SkillRootsResult, error) {
	var details []policy.FieldError
	if len(a.Roots) > MaxSkillRoots {
		details = append(details, policy.FieldError{Issue: policy.Issue{Code: "too_many_roots", Path: "$.roots", Message: fmt.Sprintf("at most %d roots", MaxSkillRoots)}})
	}
	seen := map[string]bool{}
	for i, r := range a.Roots {
		path := fmt.Sprintf("$.roots[%d]", i)
		fi, err := os.Lstat(r)
		switch {
		case !filepath.IsAbs(r) || filepath.Clean(r) != r:
			details = append(details, policy.FieldError{Issue: policy.Issue{Code: "invalid_path", Path: path, Message: "must be an absolute, clean path"}})
		case err != nil:
			details = append(details, policy.FieldError{Issue: policy.Issue{Code: "missing", Path: path, Message: err.Error()}})
		case !fi.IsDir():
			details = append(details, policy.FieldError{Issue: policy.Issue{Code: "not_directory", Path: path, Message: "not a directory (symlinks are not followed)"}})
		case seen[r]:
			details = append(details, policy.FieldError{Issue: policy.Issue{Code: "duplicate", Path: path, Message: "listed twice"}})
		}
		seen[r] = true
	}
	if len(details) > 0 {
		return SkillRootsResult{}, &CLIError{Code: "invalid_roots", Category: CategoryInvalid, Message: "the skill roots were not saved", Details: details}
	}
	roots := append([]string{}, a.Roots...)
	b, _ := json.Marshal(roots)
	if err := f.env.DB.Put(f.ctx, nsApp, keySkillRoots, b); err != nil {
		return SkillRootsResult{}, fail("settings", CategoryIO, err)
	}
	f.events.publish("settings", map[string]string{"what": "roots"})
	return f.GetSkillRoots(Empty{})
}

// CapturePolicyResult is the process-capture operator policy: as stored,
// as in effect after environment overrides, and which overrides are set.
type CapturePolicyResult struct {
	Settings  policy.CaptureSettings `json:"settings"`
	Effective policy.CaptureSettings `json:"effective"`
	Overrides []string               `json:"overrides"`
}

// GetCapturePolicy returns the process-capture operator policy.
func (f *Facade) GetCapturePolicy(Empty) (CapturePolicyResult, error) {
	s := policy.DefaultCaptureSettings()
	raw, err := f.env.DB.Get(f.ctx, policy.CaptureSettingsNamespace, policy.CaptureSettingsKey)
	if err == nil {
		parsed, issues := policy.ParseCaptureSettings(raw)
		if len(issues) > 0 {
			return CapturePolicyResult{}, errorf("capture_policy", CategoryIO, "the stored capture policy is unreadable: %v", issues[0])
		}
		s = parsed
	} else if !errors.Is(err, store.ErrNotFound) {
		return CapturePolicyResult{}, fail("capture_policy", CategoryIO, err)
	}
	out := CapturePolicyResult{Settings: s, Overrides: []string{}}
	eff, err := s.WithEnvOverrides(f.env.Getenv)
	if err != nil {
		out.Effective = policy.DefaultCaptureSettings()
	} else {
		out.Effective = eff
	}
	for _, name := range []string{policy.CaptureEnvEnabled, policy.CaptureEnvExecutableRoots, policy.CaptureEnvWorkingRoots,
		policy.CaptureEnvAllowedEnv, policy.CaptureEnvAllowExternalNetwork, policy.CaptureEnvAutoGrant} {
		if f.env.Getenv(name) != "" {
			out.Overrides = append(out.Overrides, name)
		}
	}
	return out, nil
}

// SetCapturePolicyArgs carries the whole capture operator policy.
type SetCapturePolicyArgs struct {
	Settings json.RawMessage `json:"settings"`
}

// SetCapturePolicy validates and stores the capture operator policy whole.
func (f *Facade) SetCapturePolicy(a SetCapturePolicyArgs) (CapturePolicyResult, error) {
	s, issues := policy.ParseCaptureSettings(a.Settings)
	if len(issues) > 0 {
		return CapturePolicyResult{}, &CLIError{Code: "invalid_capture_policy", Category: CategoryInvalid, Message: "the capture policy was not saved", Details: issues}
	}
	b, _ := json.Marshal(s)
	if err := f.env.DB.Put(f.ctx, policy.CaptureSettingsNamespace, policy.CaptureSettingsKey, b); err != nil {
		return CapturePolicyResult{}, fail("capture_policy", CategoryIO, err)
	}
	f.events.publish("settings", map[string]string{"what": "capture"})
	return f.GetCapturePolicy(Empty{})
}

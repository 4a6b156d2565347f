package consent

import (
	"context"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/runner"
)

// CaptureSkill is the name under which refused process captures appear in
// the run history (a capture runs a program, not a skill's script).
const CaptureSkill = "process-capture"

// AdmitCapture applies to a process capture the rules a skill run obeys
// before any mode (docs/formats/capture-operator-policy.md): the execution policy can be
// read, safe mode is off, and the agent exists, is enabled and holds
// can_execute_skills. The capture operator policy is checked separately;
// the blocked mode concerns skill scripts and does not apply.
//
// A refusal is recorded in the run history like a refused run (skill
// CaptureSkill, the refusing rule as authorized-by, command naming what
// would have run) and returned as an *Error with the refusal code; nil
// means the capture may go on to its own checks.
func (p *Pipeline) AdmitCapture(ctx context.Context, agentID, runID, command string) error {
	code, rule, msg := p.admitAgent(ctx, agentID)
	if code == "" {
		return nil
	}
	if runID == "" {
		runID = runner.NewRunID()
	}
	p.Runner.Refuse(ctx, runner.Request{RunID: runID, Skill: CaptureSkill, Agent: agentID, AuthorizedBy: rule},
		[]bundle.Issue{{Code: code, Path: "$", Message: msg + " (capture of " + command + ")"}})
	return &Error{Code: code, Msg: msg + "; nothing was run"}
}

package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/gatehouse/gatehouse/backend/approvals"
	"github.com/gatehouse/gatehouse/backend/consent"
	"github.com/gatehouse/gatehouse/backend/runner"
	"github.com/gatehouse/gatehouse/backend/skills"
)

// terminalAsker is the consent dialog of the command line: it shows the
// proposal on the controlling terminal and records the answer.
type terminalAsker struct {
	tty    io.ReadWriter
	mgr    *consent.Manager
	skill  *skills.Skill
	runner *runner.Runner
	book   *approvals.Book // the approved revisions (nil: not shown)
}

// Ask implements consent.Asker.
func (a *terminalAsker) Ask(ctx context.Context, p consent.Proposal, r *consent.Request) error {
	summary := consentSummary(a.skill, r, p, consentWarning(ctx, a.runner, r.Workspace.Path))
	if a.book != nil {
		av, _ := approvalView(ctx, a.book, r)
		summary = strings.Replace(summary, "\n  entrypoint", "\n  approved    "+approvalLine(av)+"\n  entrypoint", 1)
	}
	approved, err := askConsent(a.tty, summary)
	if err != nil {
		return err
	}
	if _, err := a.mgr.Decide(p.ID, approved); err != nil && consent.Code(err) != consent.CodeExpired {
		return err
	}
	return nil
}

// approvalLine says in one line how the revision relates to the ones
// the person approved (the terminal's form of the dialog's badge).
func approvalLine(v ApprovalView) string {
	switch v.Status {
	case "new":
		return "new skill: no revision of it was approved before"
	case "same":
		return "same revision you approved on " + v.ApprovedAt.Local().Format("2006-01-02 15:04")
	case "changed":
		names := make([]string, len(v.Changes))
		for i, c := range v.Changes {
			names[i] = c.Path
			if c.Kind != approvals.Modified {
				names[i] += " (" + c.Kind + ")"
			}
		}
		return "changed since the revision you approved on " + v.ApprovedAt.Local().Format("2006-01-02 15:04") + ": " + visibleLine(strings.Join(names, ", "))
	}
	return "unknown (" + visibleLine(v.Error) + ")"
}

// consentSummary is what the person sees before approving a run: the exact
// skill, revision, files, runtime, workspace, limits and invocation.
func consentSummary(s *skills.Skill, req *consent.Request, p consent.Proposal, warning string) string {
	var b strings.Builder
	ex, invocation := req.Execution, req.Invocation
	m := ex.Manifest
	fmt.Fprintf(&b, "\nGatehouse: a script wants to run\n\n")
	fmt.Fprintf(&b, "  skill       %s (%s)\n", visibleLine(s.Name), visibleLine(s.Root.Path))
	fmt.Fprintf(&b, "  revision    %s\n", ex.Revision)
	fmt.Fprintf(&b, "  entrypoint  %s (%s)\n", visibleLine(m.Entrypoint), m.Runtime())
	fmt.Fprintf(&b, "  files       %s\n", visibleLine(strings.Join(m.Files, ", ")))
	fmt.Fprintf(&b, "  runtime     %s %s\n", visibleLine(req.Pin.Path), visibleLine(req.Pin.Version))
	fmt.Fprintf(&b, "  workspace   %s\n", visibleLine(req.Workspace.Path))
	fmt.Fprintf(&b, "  limits      timeout %d ms, output %d bytes, stderr %d bytes\n", m.TimeoutMs, m.MaxOutputBytes, runner.MaxStderrBytes)
	fmt.Fprintf(&b, "  requested   by %s (run %s)\n", visibleLine(req.AgentID), req.RunID)
	fmt.Fprintf(&b, "  expires     %s (this approval is good for one launch)\n\n", p.ExpiresAt.Local().Format("15:04:05"))
	fmt.Fprintf(&b, "Invocation (exact bytes, %d):\n%s\n\n", len(invocation), visibleText(string(invocation)))
	fmt.Fprintf(&b, "%s\n\n", warning)
	return b.String()
}

// askConsent prints summary on the terminal and reads one answer line;
// only "y" or "yes" (any case) approves. Whatever was typed before the
// question is shown (a line typed ahead, pasted, or pushed into the
// terminal's input) is discarded just before it is printed, so only an
// answer given after the person could read the question counts.
// (Discarding after printing would also drop an answer typed at once.)
func askConsent(tty io.ReadWriter, summary string) (bool, error) {
	if err := discardTypeahead(tty); err != nil {
		return false, err
	}
	if _, err := fmt.Fprint(tty, summary+"Approve this run? [y/N] "); err != nil {
		return false, err
	}
	line, err := bufio.NewReader(io.LimitReader(tty, 256)).ReadString('\n')
	if err != nil && line == "" {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

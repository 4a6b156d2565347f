package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gatehouse/gatehouse/backend/consent"
)

// Capture grants through elicitation (docs/mcp.md "Elicitation"). Where the
// client advertises form elicitation, a capture grant is asked through
// elicitation/create as well as in the app's dialog; the first answer
// decides (the host's form answers for the person using it). Where it
// does not and no app window is open, nobody can decide, so the call is
// refused with permission_required at once instead of blocking.

// errNoDecider is the refusal when nobody can be asked.
var errNoDecider = &consent.Error{Code: "permission_required",
	Msg: "this capture needs the person's grant, but no Gatehouse window is open and this client does not support elicitation; ask the person to open Gatehouse, then call again"}

// canElicit reports whether the client of ss advertised form elicitation
// (an empty elicitation capability means form, per the MCP spec).
func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// grantForm is the form a host shows: one choice.
var grantForm = map[string]any{
	"type":     "object",
	"required": []string{"decision"},
	"properties": map[string]any{
		"decision": map[string]any{
			"type":        "string",
			"title":       "Allow this capture?",
			"description": "once: this capture only; session: matching captures on this connection; deny: refuse",
			"enum":        []string{"once", "session", "deny"},
		},
	},
}

// askGrant raises the grant in the app and, where the client supports it,
// asks through elicitation too; it waits for the decision.
func (t *mcpTools) askGrant(ctx context.Context, ss *mcp.ServerSession, runID string, want consent.GrantRequest, command []string) (consent.Grant, error) {
	f := t.s.f
	elicit := canElicit(ss)
	if !elicit && !t.s.windowOpen() {
		return consent.Grant{}, errNoDecider
	}
	defer t.keepAlive(ctx, ss, progressToken(ctx), "waiting for the capture grant in Gatehouse")()
	var onRaised func(consent.Grant)
	if elicit {
		ectx, stop := context.WithCancel(ctx)
		defer stop() // the app decided first, or the call ended: withdraw the form
		onRaised = func(g consent.Grant) {
			go t.elicitGrant(ectx, ss, g, command)
		}
	}
	return f.askGrant(ctx, runID, t.agentID, want, command, onRaised)
}

// elicitGrant asks the client's person about g and applies the answer;
// a failed or cancelled form leaves the decision to the app dialog.
func (t *mcpTools) elicitGrant(ctx context.Context, ss *mcp.ServerSession, g consent.Grant, command []string) {
	shown := make([]string, len(command))
	for i, a := range command {
		shown[i] = visibleLine(strictTruncate(a, 200))
	}
	msg := fmt.Sprintf("Gatehouse: an agent asks to capture the command %q in %s. The grant is also shown in the Gatehouse app.",
		strictTruncate(strings.Join(shown, " "), 1000), visibleLine(g.Request.WorkingDir))
	res, err := ss.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: grantForm})
	if err != nil || ctx.Err() != nil {
		return
	}
	f := t.s.f
	switch {
	case res.Action == "accept" && (res.Content["decision"] == "once" || res.Content["decision"] == "session"):
		f.consent.DecideGrant(g.ID, true, consent.GrantScope(res.Content["decision"].(string)))
	case res.Action == "decline", res.Action == "accept" && res.Content["decision"] == "deny":
		f.consent.DecideGrant(g.ID, false, "")
	}
}

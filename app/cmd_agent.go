package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/gatehouse/gatehouse/backend/agents"
)

const agentUsage = `agent add NAME [--no-execute] [--json] | agent list [--json] | agent disable ID|NAME | agent enable ID|NAME | agent remove ID|NAME

Agents are the identities MCP and API callers authenticate as. add prints the
agent's token once; keep it, it cannot be shown again. --no-execute creates an
agent that may read skills but never run scripts (can_execute_skills false).`

func runAgent(ctx context.Context, io IO, args []string) error {
	var noExec *bool
	cmd, err := openVerbCommand(ctx, io, "agent", agentUsage, "add, list, disable, enable or remove", args, func(fs *flag.FlagSet) {
		noExec = fs.Bool("no-execute", false, "with add: the agent may not execute skills")
	})
	if cmd == nil {
		return err
	}
	env, pos, asJSON := cmd.env, cmd.pos, cmd.asJSON
	defer env.Close()
	reg := agents.New(env.DB, nil)
	switch {
	case args[0] == "add" && len(pos) == 1:
		a, token, err := reg.Add(ctx, pos[0], !*noExec)
		if err != nil {
			return agentError(err)
		}
		if asJSON {
			return writeJSON(io, map[string]any{"id": a.ID, "name": a.Name, "token": token, "can_execute_skills": a.CanExecuteSkills})
		}
		fmt.Fprintf(io.Stdout, "agent %s (%s) added; can execute skills: %v\n\ntoken (shown once, keep it safe):\n%s\n", visibleText(a.Name), a.ID, a.CanExecuteSkills, token)
		fmt.Fprint(io.Stdout, mcpConfig(env, token))
		return nil
	case args[0] == "list" && len(pos) == 0:
		list, err := reg.List(ctx)
		if err != nil {
			return agentError(err)
		}
		if asJSON {
			return writeJSON(io, map[string]any{"agents": list})
		}
		tw := tabwriter.NewWriter(io.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tEXECUTE\tSTATE")
		for _, a := range list {
			state := "enabled"
			if a.Disabled {
				state = "disabled"
			}
			if a.BuiltIn {
				state = "built-in"
			}
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", a.ID, visibleLine(a.Name), a.CanExecuteSkills, state)
		}
		return tw.Flush()
	case (args[0] == "disable" || args[0] == "enable" || args[0] == "remove") && len(pos) == 1:
		a, err := reg.Find(ctx, pos[0])
		if err != nil {
			return agentError(err)
		}
		switch args[0] {
		case "disable":
			err = reg.SetDisabled(ctx, a.ID, true)
		case "enable":
			err = reg.SetDisabled(ctx, a.ID, false)
		default:
			err = reg.Remove(ctx, a.ID)
		}
		if err != nil {
			return agentError(err)
		}
		fmt.Fprintf(io.Stdout, "agent %s (%s): %sd\n", visibleText(a.Name), a.ID, args[0])
		return nil
	}
	return usageError("expected: gatehouse " + agentUsage)
}

// mcpConfig is ready-to-paste MCP client configuration for a new agent:
// the HTTP form (while the app runs) and the stdio form (`gatehouse mcp`).
func mcpConfig(env *Env, token string) string {
	base := "http://127.0.0.1:7420"
	if ri, err := readRuntimeFile(env.DataDir); err == nil {
		base = ri.URL
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "gatehouse"
	}
	httpForm, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"gatehouse": map[string]any{
		"type": "http", "url": base + "/mcp", "headers": map[string]string{"Authorization": "Bearer " + token}}}}, "", "  ")
	stdioForm, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"gatehouse": map[string]any{
		"command": exe, "args": []string{"mcp"}, "env": map[string]string{"GATEHOUSE_AGENT_TOKEN": token, "GATEHOUSE_DATA_DIR": env.DataDir}}}}, "", "  ")
	return fmt.Sprintf("\nMCP client configuration (HTTP, while Gatehouse runs):\n%s\n\nMCP client configuration (stdio):\n%s\n", httpForm, stdioForm)
}

func agentError(err error) error {
	switch {
	case errors.Is(err, agents.ErrNotFound):
		return errorf("agent_not_found", CategoryNotFound, "%v", err)
	case errors.Is(err, agents.ErrInvalidName), errors.Is(err, agents.ErrNameTaken), errors.Is(err, agents.ErrBuiltIn):
		return errorf("invalid_agent", CategoryInvalid, "%v", err)
	}
	return errorf("agents", CategoryIO, "%v", err)
}

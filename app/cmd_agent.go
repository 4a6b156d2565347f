package app

import (
	"context"
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
			return writeJSON(io, map[string]any{"id": a.ID, "name": a.Name, "token": token, "can_execute_skills": a.CanExecuteSkills, "connect": agentConnection(env, token)})
		}
		fmt.Fprintf(io.Stdout, "agent %s (%s) added; can execute skills: %v\n\ntoken (shown once, keep it safe):\n%s\n", visibleText(a.Name), a.ID, a.CanExecuteSkills, token)
		fmt.Fprint(io.Stdout, agentConnection(env, token).Text())
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

// agentConnection is the ready-to-paste MCP client configuration for a
// new agent (agents.Connect), for the app announced in the data directory's
// runtime file, or at the default address when none runs now; the CLI
// prints it and the app's AddAgent returns it.
func agentConnection(env *Env, token string) agents.Connection {
	base := "http://127.0.0.1:7420"
	if ri, err := readRuntimeFile(env.DataDir); err == nil {
		base = ri.URL
	}
	exe, err := os.Executable()
	if err != nil {
		exe = "gatehouse"
	}
	return agents.Connect(base, exe, env.DataDir, token)
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

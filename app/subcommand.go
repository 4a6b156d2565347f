package app

import (
	"context"
	"flag"
	"fmt"
	"strings"
)

// subcommandHelp handles the first argument of a command with subcommands
// (`gatehouse NOUN VERB ...`). With no argument or a help word (-h,
// --help, help) it prints the usage to stdout and reports handled; a
// missing subcommand is then a usage error listing verbs. Otherwise it
// reports not handled and the caller dispatches on args[0].
func subcommandHelp(io IO, noun, usage, verbs string, args []string) (handled bool, err error) {
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "help" {
		return false, nil
	}
	if !strings.HasSuffix(usage, "\n") {
		usage += "\n"
	}
	fmt.Fprint(io.Stdout, "Usage: gatehouse "+usage)
	if len(args) == 0 {
		return true, usageError("%s: missing subcommand (%s)", noun, verbs)
	}
	return true, nil
}

// verbCommand is one `gatehouse NOUN VERB [--json] [flags] ARGS...`
// invocation, parsed, with the data directory open (Close env when done).
type verbCommand struct {
	pos    []string
	asJSON bool
	env    *Env
}

// openVerbCommand does the common start of a NOUN VERB command that works
// on the data directory: help (subcommandHelp), the --json flag plus any
// flags extra adds, and openEnv. It returns a nil command when there is
// nothing more to do: help was printed (err nil) or something failed.
func openVerbCommand(ctx context.Context, io IO, noun, usage, verbs string, args []string, extra func(*flag.FlagSet)) (*verbCommand, error) {
	if handled, err := subcommandHelp(io, noun, usage, verbs, args); handled {
		return nil, err
	}
	fs := newFlags(io, noun+" "+args[0], usage)
	asJSON := fs.Bool("json", false, "print JSON")
	if extra != nil {
		extra(fs)
	}
	pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return nil, err
	}
	env, err := openEnv(ctx, io)
	if err != nil {
		return nil, err
	}
	return &verbCommand{pos: pos, asJSON: *asJSON, env: env}, nil
}

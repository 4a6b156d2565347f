// Package app is Gatehouse's composition root and every outward face: the
// command-line interface today, and the desktop facade, browser bridge and
// MCP server as they arrive. Domain rules live in backend/; this package
// wires them together and presents their results.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	iopkg "io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

// command is one CLI subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, io IO, args []string) error
}

func commands() []command {
	return []command{
		{"skill", "list, inspect and manage skill bundles", runSkill},
		{"serve", "serve the UI in a browser (loopback only, token-protected)", runServe},
		{"desktop", "open the desktop window", runDesktop},
		{"doctor", "report what is installed, pinned and configured", runDoctor},
		{"runs", "show the run history (attempts and refusals)", runRuns},
		{"policy", "show or set the skill execution policy", runPolicy},
		{"security", "show or set the confinement of scripts (filesystem, network)", runSecurity},
		{"agent", "add, list, disable or remove agent identities", runAgent},
		{"mcp", "MCP over stdio, relayed to the running app (for agent hosts)", runMCP},
		{"run-replay-machine", "run a replay machine against a list of events (no process, no socket)", runReplayMachine},
		{"capture-process", "run an approved process scenario and write its capture Evidence", runCaptureProcess},
		{"evidence", "verify Evidence files (envelope and capture record invariants)", runEvidence},
		{"compare-process-captures", "compare two process capture Evidence files (optionally against a trace spec)", runCompare},
	}
}

// Main runs the CLI with args (args[0] is the program name) and returns
// the exit status. It never panics: an unexpected panic is reported as a
// structured internal error.
func Main(args []string, stdin iopkg.Reader, stdout, stderr iopkg.Writer) (status int) {
	io := IO{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
	defer func() {
		if r := recover(); r != nil {
			status = writeError(stderr, errorf("internal", CategoryInternal, "internal error: %v (please report this)", r))
			if io.Getenv("GATEHOUSE_DEBUG") != "" {
				stderr.Write(debug.Stack())
			}
		}
	}()
	return run(context.Background(), io, args[1:])
}

func run(ctx context.Context, io IO, args []string) int {
	if len(args) == 0 {
		if !desktopBuilt {
			fmt.Fprint(io.Stdout, rootUsage())
			fmt.Fprintln(io.Stdout, "\nThis binary has no desktop window (build it with `make desktop`).\nStart browser mode with `gatehouse serve` and open the URL it prints.")
			return 0
		}
		args = []string{"desktop"}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(io.Stdout, rootUsage())
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(ctx, io, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			if err != nil {
				return writeError(io.Stderr, err)
			}
			return 0
		}
	}
	return writeError(io.Stderr, usageError("unknown command %q; run `gatehouse --help`", args[0]))
}

func rootUsage() string {
	var b strings.Builder
	b.WriteString("Usage: gatehouse <command> [arguments]\n\n")
	b.WriteString("Gatehouse stands between AI agents and this machine: it inspects and freezes\nskill bundles, asks for consent and runs approved scripts under a bounded protocol.\n\nCommands:\n")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(&b, "  %-26s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun `gatehouse <command> --help` for a command's arguments.\n")
	b.WriteString("Data directory: $GATEHOUSE_DATA_DIR, else $XDG_DATA_HOME/gatehouse, else ~/.local/share/gatehouse.\n")
	return b.String()
}

// newFlags returns a flag set that prints usage to stdout on --help and
// reports parse errors as usage errors instead of exiting.
func newFlags(io IO, name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(iopkg.Discard) // parse errors become structured errors instead
	fs.Usage = func() {
		fmt.Fprintf(io.Stdout, "Usage: gatehouse %s\n", usage)
		fs.SetOutput(io.Stdout)
		fs.PrintDefaults()
		fs.SetOutput(iopkg.Discard)
	}
	return fs
}

// parseNoArgs parses args for a command that takes flags only: a
// positional argument is the usage error "NAME takes no arguments".
func parseNoArgs(fs *flag.FlagSet, args []string) error {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("%s takes no arguments", fs.Name())
	}
	return nil
}

// parseFlags parses args; interleaved flags and positional arguments are
// allowed (`skill inspect NAME --json`).
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, flag.ErrHelp // the flag package has printed the usage
			}
			return nil, usageError("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if len(rest) < len(args) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil // everything after "--" is positional
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

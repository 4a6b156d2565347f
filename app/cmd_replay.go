package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/replay"
)

// runReplayMachine is `gatehouse run-replay-machine RUN.json`: it validates
// {machine, events} and offers the events to the machine in order, with no
// process and no socket, printing the redacted result on stdout.
func runReplayMachine(_ context.Context, io IO, args []string) error {
	fs := newFlags(io, "run-replay-machine", "run-replay-machine RUN.json\n\n"+
		"Validates a replay machine and offers it the run's events in order, without starting\n"+
		"a process or opening a socket. RUN.json (\"-\" for stdin) is {\"machine\": …, \"events\": […]}\n"+
		"with at most 10,000 events; the result is printed as JSON. Refused events are data in\n"+
		"the result, not errors. Captured sensitive values appear only as <secret:ALIAS>.")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageError("run-replay-machine takes exactly one argument: the run file (or - for stdin)")
	}
	data, err := readSource(io, pos[0], replay.MaxInputBytes)
	if err != nil {
		return err
	}
	run, issues := replay.ParseRun(data)
	if len(issues) > 0 {
		return &CLIError{
			Code:     "invalid_request",
			Category: CategoryInvalid,
			Message:  fmt.Sprintf("%s is not a valid replay run (%d issue(s); see details); first: %s", pos[0], len(issues), issues[0]),
			Details:  map[string]any{"issues": issues},
		}
	}
	res, err := replay.Execute(run)
	if err != nil {
		return errorf("internal", CategoryInternal, "%v", err)
	}
	enc := json.NewEncoder(io.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return errorf("output", CategoryIO, "%v", err)
	}
	return nil
}

package app

import (
	"flag"
	"fmt"
)

// desktopOptions are the flags of `gatehouse desktop`, shared by the
// window build and the stub so both print the same --help.
type desktopOptions struct {
	smoke *bool
	view  *string
}

func desktopFlags(io IO) (*flag.FlagSet, desktopOptions) {
	fs := newFlags(io, "desktop", "desktop [--view NAME] [--smoke]\n\nOpens the desktop window (binaries built with `make desktop`). A second launch on the same\ndata directory brings the running window to the front and hands it its arguments.")
	return fs, desktopOptions{
		smoke: fs.Bool("smoke", false, "start, load the UI, round-trip one call, exit"),
		view:  fs.String("view", "", "show this view: skills, runs, evidence, compare or security"),
	}
}

// launchEvent is what a second launch asks of the running window.
type launchEvent struct {
	Args []string
	View string
}

// secondLaunch reads a second launch's arguments (the program name
// excluded) with the same flags as the first; arguments it cannot read
// are reported and otherwise ignored, since the window is already open.
func secondLaunch(io IO, args []string) launchEvent {
	ev := launchEvent{Args: args}
	if len(args) > 0 && args[0] == "desktop" {
		args = args[1:]
	}
	fs, opts := desktopFlags(IO{Stdout: io.Stderr, Stderr: io.Stderr, Getenv: io.Getenv})
	if _, err := parseFlags(fs, args); err != nil {
		fmt.Fprintf(io.Stderr, "gatehouse: ignoring the second launch's arguments: %v\n", err)
		return ev
	}
	if validView(*opts.view) {
		ev.View = *opts.view
	}
	return ev
}

func validView(v string) bool {
	switch v {
	case "skills", "runs", "evidence", "compare", "security":
		return true
	}
	return false
}

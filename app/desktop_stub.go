//go:build !desktop

package app

import "context"

// desktopBuilt reports whether this binary carries the desktop window.
const desktopBuilt = false

func runDesktop(ctx context.Context, io IO, args []string) error {
	fs, _ := desktopFlags(io)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	return errorf("no_desktop", CategoryUsage, "this binary was built without the desktop window; run `gatehouse serve` for browser mode, or build the window with `make desktop`")
}

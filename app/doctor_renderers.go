package app

import (
	"fmt"

	"github.com/gatehouse/gatehouse/backend/capture"
)

// rendererWhy says what a renderer helper is and why one may be running
// while nothing is captured (docs/process-ownership.md, "The renderer
// helper").
const rendererWhy = "the pinned Node running Gatehouse's embedded xterm.js terminal renderer; " +
	"the desktop app and `gatehouse serve` keep one idle, started ahead of the next capture, " +
	"so a capture does not wait for Node's start, and end it when they close"

// rendererChecks are doctor's lines about the renderer helpers alive now
// (capture.LiveRenderers): one per helper, a warning when the Gatehouse
// process that started it is gone, or one line saying none runs.
func rendererChecks() []DoctorCheck {
	live := capture.LiveRenderers()
	if len(live) == 0 {
		return []DoctorCheck{{"renderer helper", "ok", "none running (a renderer helper is " + rendererWhy + ")"}}
	}
	var out []DoctorCheck
	for _, p := range live {
		c := DoctorCheck{"renderer helper", "ok", fmt.Sprintf("pid %d, %.1f MB resident, started by Gatehouse pid %d: idle or rendering a capture; %s",
			p.PID, float64(p.RSSKiB)/1024, p.OwnerPID, rendererWhy)}
		if !p.OwnerAlive {
			c.Status = "warning"
			c.Detail = fmt.Sprintf("pid %d, %.1f MB resident: its Gatehouse process (pid %d) is gone, so nothing will use or end it; end it with `kill %d` (%s)",
				p.PID, float64(p.RSSKiB)/1024, p.OwnerPID, p.PID, rendererWhy)
		}
		out = append(out, c)
	}
	return out
}

package app

import (
	"path/filepath"
	"sync"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// rendererHelper is how captures and asciicast imports run their terminal
// renderer: on the pinned Node (its SHA-256 checked once per process),
// from its startup snapshot kept in the data directory's cache (made on
// first need), and owned by sup. Without a usable pin it fails with code
// runtime_unavailable, saying what to do.
func rendererHelper(env *Env, sup *proctree.Supervisor) (capture.RendererHelper, error) {
	if env.Pin == nil {
		return capture.RendererHelper{}, errorf("runtime_unavailable", CategoryInternal,
			"the terminal renderer runs on the pinned Node runtime and none is pinned (%v); install Node 20+ and see `gatehouse doctor`", env.PinErr)
	}
	if err := env.RuntimeCheck()(); err != nil {
		return capture.RendererHelper{}, errorf("runtime_unavailable", CategoryInternal, "the pinned Node runtime no longer checks out: %v", err)
	}
	return capture.RendererHelper{Node: env.Pin.Path, Supervisor: sup, NodeSHA256: env.Pin.SHA256, Snapshots: env.RendererSnapshots()}, nil
}

// RendererSnapshots keeps the renderer helper's startup snapshots of this
// data directory, in its cache/renderer directory (one per process, so a
// snapshot is read and verified once per process).
func (e *Env) RendererSnapshots() *capture.RendererSnapshots {
	e.snapshotsOnce.Do(func() {
		e.snapshots = capture.NewRendererSnapshots(filepath.Join(e.DataDir, "cache", "renderer"))
	})
	return e.snapshots
}

// aheadRenderers is a long-running process's renderer helpers started
// ahead of the next capture (capture.Renderers), so a capture from the
// app or an MCP client does not wait for Node to start: made when the
// facade opens with captures enabled, or by its first capture, and
// closed with the facade. Safe for concurrent use; its zero value is
// ready.
type aheadRenderers struct {
	mu     sync.Mutex
	h      capture.RendererHelper
	r      *capture.Renderers
	closed bool
}

// get returns the renderers that run helpers as h says, starting them
// (or, for another h, replacing them) as needed; nil once closed, so a
// capture racing the facade's close starts its own helper as a single
// capture does.
func (a *aheadRenderers) get(h capture.RendererHelper) *capture.Renderers {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	if a.r != nil && a.h != h {
		old := a.r
		go old.Close() // its helper ends off the caller's critical path
		a.r = nil
	}
	if a.r == nil {
		a.h, a.r = h, capture.NewRenderers(h)
	}
	return a.r
}

// close ends the helper started ahead; later captures start their own.
func (a *aheadRenderers) close() {
	a.mu.Lock()
	r := a.r
	a.r, a.closed = nil, true
	a.mu.Unlock()
	if r != nil {
		r.Close()
	}
}

// rendererSnapshotCheck is the doctor's line on the renderer helper's
// startup snapshot: made now when missing (about half a second of CPU),
// verified when present, or why captures start the helper without it.
func rendererSnapshotCheck(env *Env) DoctorCheck {
	c := DoctorCheck{Name: "renderer snapshot", Status: "warning"}
	if env.Pin == nil {
		c.Detail = "no Node runtime pinned"
		return c
	}
	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	defer sup.Close()
	rh, err := rendererHelper(env, sup)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	if err := rh.Snapshots.Prepare(rh); err != nil {
		c.Detail = "captures start the terminal renderer without a startup snapshot (slower): " + err.Error()
		return c
	}
	c.Status, c.Detail = "ok", rh.Snapshots.Status()
	return c
}

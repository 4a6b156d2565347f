package app

import (
	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// rendererHelper is how captures and asciicast imports run their terminal
// renderer: on the pinned Node (its SHA-256 checked once per process) and
// owned by sup. Without a usable pin it fails with code
// runtime_unavailable, saying what to do.
func rendererHelper(env *Env, sup *proctree.Supervisor) (capture.RendererHelper, error) {
	if env.Pin == nil {
		return capture.RendererHelper{}, errorf("runtime_unavailable", CategoryInternal,
			"the terminal renderer runs on the pinned Node runtime and none is pinned (%v); install Node 20+ and see `gatehouse doctor`", env.PinErr)
	}
	if err := env.RuntimeCheck()(); err != nil {
		return capture.RendererHelper{}, errorf("runtime_unavailable", CategoryInternal, "the pinned Node runtime no longer checks out: %v", err)
	}
	return capture.RendererHelper{Node: env.Pin.Path, Supervisor: sup}, nil
}

package app

import (
	"context"
	"fmt"
	iopkg "io"
	"sync"
	"time"
)

// smokeTimeout is how long `gatehouse desktop --smoke` waits for the UI's
// first facade call.
const smokeTimeout = 60 * time.Second

// windowHandle is the desktop window's context as the callbacks running on
// other goroutines see it (a second launch, the smoke test): Wails hands
// it over in OnStartup, on its own goroutine, so it is kept under a lock.
// It carries no Wails types, so the window-less builds test it.
type windowHandle struct {
	quitWith func(context.Context) // closes the window (wailsruntime.Quit)

	mu          sync.Mutex
	ctx         context.Context
	quitPending bool
}

// started records the window's context; a quit asked for before the
// window existed happens now.
func (w *windowHandle) started(ctx context.Context) {
	w.mu.Lock()
	w.ctx = ctx
	pending := w.quitPending
	w.mu.Unlock()
	if pending {
		w.quitWith(ctx)
	}
}

// context returns the window's context, or nil before it started.
func (w *windowHandle) context() context.Context {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ctx
}

// quit closes the window, or closes it as soon as it starts.
func (w *windowHandle) quit() {
	w.mu.Lock()
	ctx := w.ctx
	if ctx == nil {
		w.quitPending = true
	}
	w.mu.Unlock()
	if ctx != nil {
		w.quitWith(ctx)
	}
}

// smokeWatch follows the window's smoke test: once the UI has called the
// facade (called is closed) or timeout has passed, whichever comes first,
// it says which on out and calls quit, which closes the window so the
// Wails loop returns. The returned result, called once that loop has
// returned, ends the watch and gives the verdict: nil when the UI called,
// else a structured error (exit status 1). The desktop command returns
// that error instead of calling os.Exit, so its deferred closes (the
// facade's runs, the agents' listener, the database) still run.
func smokeWatch(called <-chan struct{}, timeout time.Duration, quit func(), out iopkg.Writer) (result func() error) {
	stop := make(chan struct{})
	verdict := make(chan error, 1)
	go func() {
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-called:
			fmt.Fprintln(out, "smoke: the UI loaded and AppInfo round-tripped")
			verdict <- nil
		case <-t.C:
			verdict <- errorf("smoke_failed", CategoryInternal, "smoke: the UI never called the facade within %s", timeout)
		case <-stop:
			select {
			case <-called:
				verdict <- nil // it did call; the window closed before the watch saw it
			default:
				verdict <- errorf("smoke_failed", CategoryInternal, "smoke: the window closed before the UI called the facade")
			}
			return
		}
		quit()
	}()
	return func() error {
		close(stop)
		return <-verdict
	}
}

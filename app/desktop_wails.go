//go:build desktop

package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wailsruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	buildassets "github.com/gatehouse/gatehouse/build"
	"github.com/gatehouse/gatehouse/frontend"
)

// desktopBuilt reports whether this binary carries the desktop window.
const desktopBuilt = true

// runDesktop opens the Wails window over the same facade browser mode
// serves. With --smoke it exits 0 once the UI has loaded and called the
// facade (AppInfo), or 1 after 60 s: the CI smoke test under Xvfb. Either
// way it returns, so its deferred closes run.
//
// One window per data directory: a second launch on the same data
// directory hands its arguments to the running window over the D-Bus
// session bus (Wails' single-instance lock), which comes to the front, and
// the second process exits with status 1 (Wails' behaviour) without
// having served agents or touched the runtime file. Without a
// session bus the lock cannot be taken and each launch opens its own
// window.
func runDesktop(ctx context.Context, io IO, args []string) error {
	fs, opts := desktopFlags(io)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	env, err := openEnv(ctx, io)
	if err != nil {
		return err
	}
	defer env.Close()
	f, err := newFacade(env, "desktop", consentWindow{})
	if err != nil {
		return errorf("startup", CategoryInternal, "%v", err)
	}
	defer f.close()
	win := &windowHandle{quitWith: wailsruntime.Quit}
	smokeResult := func() error { return nil }
	if *opts.smoke {
		smokeResult = smokeWatch(f.watchFirstCall(), smokeTimeout, win.quit, io.Stdout)
	}
	var readyOnce sync.Once
	// Attention starts before the window, so a request raised while the
	// window is still loading is not missed (the window counts as not
	// focused until GTK says otherwise).
	f.onClose(startDesktopAttention(f, io))
	err = wails.Run(&options.App{
		Title: "Gatehouse", Width: 1280, Height: 800, MinWidth: 960, MinHeight: 600,
		AssetServer: &assetserver.Options{Assets: frontend.Dist()},
		Bind:        []interface{}{f},
		Linux: &linux.Options{
			Icon:             buildassets.AppIcon(),
			ProgramName:      "gatehouse", // WM_CLASS, matching the desktop entry's StartupWMClass
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
		SingleInstanceLock: &options.SingleInstanceLock{
			UniqueId: singleInstanceID(env.DataDir),
			OnSecondInstanceLaunch: func(d options.SecondInstanceData) {
				wctx := win.context()
				if wctx == nil {
					return
				}
				fmt.Fprintf(io.Stderr, "gatehouse: a second launch (%q, in %s) handed over to this window\n", d.Args, d.WorkingDirectory)
				wailsruntime.WindowUnminimise(wctx)
				wailsruntime.WindowShow(wctx)
				showView(wctx, secondLaunch(io, d.Args).View)
			},
		},
		OnDomReady: func(c context.Context) {
			showView(c, *opts.view)
			readyOnce.Do(func() {
				hookGTKWindow()
				// Agents are served (and the runtime file naming this
				// window written) only now: a second launch has handed
				// over and exited by this point, inside wails.Run, by an
				// os.Exit that skips every deferred close. OnStartup is
				// too early: Wails calls it alongside that check.
				f.onClose(serveAgents(ctx, env, f))
			})
		},
		OnStartup: func(c context.Context) {
			events, stop := f.events.subscribe(256)
			f.onClose(stop)
			go func() {
				for e := range events {
					wailsruntime.EventsEmit(c, e.Name, e.Data)
				}
			}()
			win.started(c)
		},
	})
	smokeErr := smokeResult()
	if err != nil {
		return errorf("desktop", CategoryInternal, "%v", err)
	}
	return smokeErr
}

// startDesktopAttention flags the window and sends desktop notifications
// for requests that arrive while it is not focused. Without a session bus
// there are no notifications (said once on stderr); the urgency hint
// still works.
func startDesktopAttention(f *Facade, io IO) func() {
	win := gtkWindow{}
	n, err := newDBusNotifier()
	if err != nil {
		fmt.Fprintf(io.Stderr, "gatehouse: no desktop notifications: %v\n", err)
		return startAttention(f, win, nil, io.Stderr)
	}
	stop := startAttention(f, win, n, io.Stderr)
	return func() { stop(); n.Close() }
}

// showView routes the window to one of the known views (validView: the
// name is one of a fixed set, so it is safe inside the script).
func showView(ctx context.Context, view string) {
	if validView(view) {
		wailsruntime.WindowExecJS(ctx, fmt.Sprintf("location.hash = %q", "#/"+view))
	}
}

// singleInstanceID names the single-instance lock of one data directory,
// so two windows on two data directories (tests, a second profile) do not
// capture each other's launches.
func singleInstanceID(dataDir string) string {
	sum := sha256.Sum256([]byte(dataDir))
	return "io.gatehouse.desktop." + hex.EncodeToString(sum[:8])
}

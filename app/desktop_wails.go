//go:build desktop

package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	wailsruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/gatehouse/gatehouse/frontend"
)

// desktopBuilt reports whether this binary carries the desktop window.
const desktopBuilt = true

// runDesktop opens the Wails window over the same facade browser mode
// serves. With --smoke it exits 0 once the UI has loaded and called the
// facade (AppInfo), or 1 after 60 s: the CI smoke test under Xvfb.
func runDesktop(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "desktop", "desktop [--smoke]\n\nOpens the desktop window.")
	smoke := fs.Bool("smoke", false, "start, load the UI, round-trip one call, exit")
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
	defer serveAgents(ctx, env, f)()
	called := f.watchFirstCall()
	smokeFailed := false
	err = wails.Run(&options.App{
		Title: "Gatehouse", Width: 1280, Height: 800, MinWidth: 960, MinHeight: 600,
		AssetServer: &assetserver.Options{Assets: frontend.Dist()},
		Bind:        []interface{}{f},
		OnStartup: func(wctx context.Context) {
			events, stop := f.events.subscribe(256)
			f.stop = append(f.stop, stop)
			go func() {
				for e := range events {
					wailsruntime.EventsEmit(wctx, e.Name, e.Data)
				}
			}()
			if *smoke {
				go func() {
					select {
					case <-called:
						fmt.Fprintln(io.Stdout, "smoke: the UI loaded and AppInfo round-tripped")
					case <-time.After(60 * time.Second):
						fmt.Fprintln(io.Stderr, "smoke: the UI never called the facade")
						smokeFailed = true
					}
					wailsruntime.Quit(wctx)
				}()
			}
		},
	})
	if err != nil {
		return errorf("desktop", CategoryInternal, "%v", err)
	}
	if smokeFailed {
		os.Exit(1)
	}
	return nil
}

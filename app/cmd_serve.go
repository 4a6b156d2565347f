package app

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

const serveUsage = `serve [--addr 127.0.0.1:7420] [--open]

Serves the Gatehouse UI and its API on a loopback address. The URL printed on
its own line carries a per-launch access token; open it in a browser (the
page keeps the token in this tab's sessionStorage, never in a cookie).
--open gives the browser a one-time link valid for 60 s instead.`

func runServe(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "serve", serveUsage)
	addr := fs.String("addr", "127.0.0.1:7420", "loopback address to listen on (port 0 picks a free port)")
	open := fs.Bool("open", false, "open the URL in the default browser")
	window := testConsentWindow(fs)
	keepAlive := testMCPKeepAlive(fs)
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	ln, err := listenLoopback(*addr)
	if err != nil {
		return errorf("listen", CategoryInvalid, "%v", err)
	}
	defer ln.Close()
	env, err := openEnv(ctx, io)
	if err != nil {
		return err
	}
	defer env.Close()
	f, err := newFacade(env, "browser", window())
	if err != nil {
		return errorf("startup", CategoryInternal, "%v", err)
	}
	defer f.close()
	srv, err := newServer(f, ln.Addr())
	if err != nil {
		return errorf("startup", CategoryInternal, "%v", err)
	}
	if d := keepAlive(); d > 0 {
		srv.mcp.limits.KeepAlive = d
	}
	url := fmt.Sprintf("http://%s/?token=%s", ln.Addr(), srv.token)
	removeRuntime, err := writeRuntimeFile(env, fmt.Sprintf("http://%s", ln.Addr()))
	if err != nil {
		return errorf("startup", CategoryIO, "%v", err)
	}
	defer removeRuntime()
	fmt.Fprintf(io.Stderr, "Gatehouse is serving on %s (data: %s). Open this URL (it carries your access token):\n", ln.Addr(), env.DataDir)
	fmt.Fprintln(io.Stdout, url)
	if *open {
		// Never the token itself: a command line is readable by other users.
		openBrowser(srv.openingURL(fmt.Sprintf("http://%s", ln.Addr())))
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveUntil(ctx, ln, srv)
}

// serveAgents gives the desktop window the agent face browser mode has:
// the loopback server (MCP at /mcp; its UI API stays locked because its
// token is never shown) on 127.0.0.1:7420, or a free port when that is
// taken, announced in the runtime file. It returns the function that stops
// it. Failing to listen only costs agents their access; the window works.
func serveAgents(ctx context.Context, env *Env, f *Facade) func() {
	ln, err := listenLoopback("127.0.0.1:7420")
	if err != nil {
		if ln, err = listenLoopback("127.0.0.1:0"); err != nil {
			fmt.Fprintf(env.Stderr, "gatehouse: agents cannot connect: %v\n", err)
			return func() {}
		}
	}
	srv, err := newServer(f, ln.Addr())
	if err != nil {
		ln.Close()
		return func() {}
	}
	remove, err := writeRuntimeFile(env, "http://"+ln.Addr().String())
	if err != nil {
		remove = func() {}
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { serveUntil(sctx, ln, srv); close(done) }()
	return func() { stop(); <-done; remove() }
}

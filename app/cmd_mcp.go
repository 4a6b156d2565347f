package app

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpUsage = `mcp

A stdio MCP server for agent hosts that launch servers as commands: it relays
to the running Gatehouse app (found through runtime.json in the data
directory) and authenticates with the agent token in GATEHOUSE_AGENT_TOKEN.`

// runMCP relays JSON-RPC messages between stdio and the running app's
// Streamable HTTP endpoint, unchanged, until either side ends.
func runMCP(ctx context.Context, io IO, args []string) error {
	fs := newFlags(io, "mcp", mcpUsage)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	token := io.Getenv("GATEHOUSE_AGENT_TOKEN")
	if token == "" {
		return errorf("no_token", CategoryUsage, "set GATEHOUSE_AGENT_TOKEN to an agent token (create one with `gatehouse agent add NAME`)")
	}
	dir, err := DataDir(io.Getenv)
	if err != nil {
		return errorf("data_dir", CategoryIO, "%v", err)
	}
	ri, err := readRuntimeFile(dir)
	if err != nil {
		return errorf("not_running", CategoryNotFound, "%v", err)
	}
	remote, err := (&mcp.StreamableClientTransport{Endpoint: ri.URL + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: token, base: http.DefaultTransport}}}).Connect(ctx)
	if err != nil {
		return errorf("connect", CategoryIO, "connect to %s: %v", ri.URL, err)
	}
	defer remote.Close()
	local, err := (&mcp.IOTransport{Reader: readCloser{io.Stdin}, Writer: nopWriteCloser{io.Stdout}}).Connect(ctx)
	if err != nil {
		return errorf("stdio", CategoryIO, "%v", err)
	}
	defer local.Close()
	errs := make(chan error, 2)
	relay := func(from, to mcp.Connection) {
		for {
			msg, err := from.Read(ctx)
			if err != nil {
				errs <- err
				return
			}
			if err := to.Write(ctx, msg); err != nil {
				errs <- err
				return
			}
		}
	}
	go relay(local, remote)
	go relay(remote, local)
	<-errs
	return nil
}

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

type readCloser struct {
	r interface{ Read([]byte) (int, error) }
}

func (r readCloser) Read(p []byte) (int, error) { return r.r.Read(p) }
func (readCloser) Close() error                 { return nil }

type nopWriteCloser struct {
	w interface{ Write([]byte) (int, error) }
}

func (w nopWriteCloser) Write(p []byte) (int, error) { return w.w.Write(p) }
func (nopWriteCloser) Close() error                  { return nil }

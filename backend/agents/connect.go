package agents

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ServerName is the name the connection snippets give Gatehouse in an MCP
// client's configuration.
const ServerName = "gatehouse"

// Connection is how an MCP client reaches Gatehouse as one agent, in the
// forms people paste: the MCP endpoint, a `.mcp.json` entry and a
// `claude mcp add` command line, each over HTTP (while the app runs) and
// over stdio (`gatehouse mcp`, which relays to the running app). The CLI
// prints these strings and the app shows them: one source for both.
type Connection struct {
	// URL is the MCP endpoint over HTTP.
	URL string `json:"url"`
	// MCPJSON is a `.mcp.json` document connecting over HTTP with the token as a bearer header.
	MCPJSON string `json:"mcpJson"`
	// ClaudeHTTP is the `claude mcp add` command for the HTTP form.
	ClaudeHTTP string `json:"claudeHttp"`
	// StdioJSON is a `.mcp.json` document that starts `gatehouse mcp` with the token in its environment.
	StdioJSON string `json:"stdioJson"`
	// ClaudeStdio is the `claude mcp add` command for the stdio form.
	ClaudeStdio string `json:"claudeStdio"`
}

// Connect returns the connection snippets for the app at base (its loopback
// base URL, "http://127.0.0.1:7420"), the gatehouse executable exe, the data
// directory dataDir and the agent token token. The command lines quote
// every argument for a POSIX shell, so a path with spaces or quotes pastes
// as one argument.
func Connect(base, exe, dataDir, token string) Connection {
	url := strings.TrimRight(base, "/") + "/mcp"
	httpForm, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{ServerName: map[string]any{
		"type": "http", "url": url, "headers": map[string]string{"Authorization": "Bearer " + token}}}}, "", "  ")
	stdioForm, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{ServerName: map[string]any{
		"command": exe, "args": []string{"mcp"}, "env": map[string]string{"GATEHOUSE_AGENT_TOKEN": token, "GATEHOUSE_DATA_DIR": dataDir}}}}, "", "  ")
	return Connection{
		URL:     url,
		MCPJSON: string(httpForm),
		ClaudeHTTP: shellJoin("claude", "mcp", "add", "--transport", "http", ServerName, url,
			"--header", "Authorization: Bearer "+token),
		StdioJSON: string(stdioForm),
		ClaudeStdio: shellJoin("claude", "mcp", "add", "--transport", "stdio", ServerName,
			"--env", "GATEHOUSE_AGENT_TOKEN="+token, "--env", "GATEHOUSE_DATA_DIR="+dataDir, "--", exe, "mcp"),
	}
}

// Text is the connection as the CLI prints it after `agent add`.
func (c Connection) Text() string {
	return fmt.Sprintf("\nMCP endpoint: %s\n\nMCP client configuration (.mcp.json, HTTP, while Gatehouse runs):\n%s\n\nClaude Code (HTTP):\n%s\n\nMCP client configuration (.mcp.json, stdio):\n%s\n\nClaude Code (stdio):\n%s\n",
		c.URL, c.MCPJSON, c.ClaudeHTTP, c.StdioJSON, c.ClaudeStdio)
}

// shellJoin quotes each argument for a POSIX shell and joins them with
// spaces. Hand-written because the rule is four lines: an argument made
// only of safe characters stays as it is; any other is wrapped in single
// quotes, a single quote inside written as '\”.
func shellJoin(args ...string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+%") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

package agents

import (
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// The snippets are real: both .mcp.json forms parse to the entries an MCP
// client reads, and each claude command line, run through a real shell,
// gives exactly the intended arguments, even for an executable and a data
// directory with spaces, quotes and a $ in their paths.
func TestConnectSnippets(t *testing.T) {
	exe := "/opt/my apps/it's $HOME/gatehouse"
	dir := "/home/a b/.local/share/gate\"house"
	tok := TokenPrefix + "abc_DEF-123"
	c := Connect("http://127.0.0.1:7420/", exe, dir, tok)
	if c.URL != "http://127.0.0.1:7420/mcp" {
		t.Fatalf("URL %q", c.URL)
	}
	var httpForm struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(c.MCPJSON), &httpForm); err != nil {
		t.Fatal(err)
	}
	g := httpForm.MCPServers[ServerName]
	if g.Type != "http" || g.URL != c.URL || g.Headers["Authorization"] != "Bearer "+tok {
		t.Fatalf("http form %+v", httpForm)
	}
	var stdioForm struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(c.StdioJSON), &stdioForm); err != nil {
		t.Fatal(err)
	}
	s := stdioForm.MCPServers[ServerName]
	if s.Command != exe || !reflect.DeepEqual(s.Args, []string{"mcp"}) || s.Env["GATEHOUSE_AGENT_TOKEN"] != tok || s.Env["GATEHOUSE_DATA_DIR"] != dir {
		t.Fatalf("stdio form %+v", stdioForm)
	}
	words := func(line string) []string {
		// The shell prints each argument it was given on its own NUL-terminated line.
		out, err := exec.Command("sh", "-c", `claude() { printf '%s\0' claude "$@"; }; `+line).Output()
		if err != nil {
			t.Fatalf("sh: %v", err)
		}
		return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	}
	if got, want := words(c.ClaudeHTTP), []string{"claude", "mcp", "add", "--transport", "http", ServerName, c.URL, "--header", "Authorization: Bearer " + tok}; !reflect.DeepEqual(got, want) {
		t.Errorf("claude http:\n got %q\nwant %q", got, want)
	}
	if got, want := words(c.ClaudeStdio), []string{"claude", "mcp", "add", "--transport", "stdio", ServerName, "--env", "GATEHOUSE_AGENT_TOKEN=" + tok, "--env", "GATEHOUSE_DATA_DIR=" + dir, "--", exe, "mcp"}; !reflect.DeepEqual(got, want) {
		t.Errorf("claude stdio:\n got %q\nwant %q", got, want)
	}
	for _, part := range []string{c.URL, c.MCPJSON, c.ClaudeHTTP, c.StdioJSON, c.ClaudeStdio} {
		if !strings.Contains(c.Text(), part) {
			t.Errorf("Text lacks %q", part)
		}
	}
}

package app

import (
	"bytes"
	"context"
	"encoding/json"
	iopkg "io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse/gatehouse/backend/agents"
)

type cliResult struct {
	status         int
	stdout, stderr string
}

// cli runs the CLI in-process against a private data directory, with an
// empty stdin and no controlling terminal (a test never prompts on the
// terminal it was started from).
func cli(t *testing.T, env map[string]string, args ...string) cliResult {
	t.Helper()
	return cliWith(t, env, cliOptions{}, args...)
}

// cliOptions are the streams and terminal of an in-process CLI run.
type cliOptions struct {
	stdin    string
	terminal iopkg.ReadWriteCloser // the controlling terminal; nil: none
	isTTY    bool                  // stderr reports itself a terminal
}

// cliWith runs the CLI in-process with the given stdin and terminal.
func cliWith(t *testing.T, env map[string]string, o cliOptions, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	io := IO{Stdin: strings.NewReader(o.stdin), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == "PATH" || k == "HOME" {
			return os.Getenv(k)
		}
		return ""
	}}
	io.OpenTerminal = func() (iopkg.ReadWriteCloser, error) {
		if o.terminal == nil {
			return nil, &os.PathError{Op: "open", Path: "/dev/tty", Err: syscall.ENXIO}
		}
		return o.terminal, nil
	}
	io.IsTerminal = func(w iopkg.Writer) bool { return o.isTTY && w == iopkg.Writer(&errb) }
	status := run(context.Background(), io, args)
	return cliResult{status, out.String(), errb.String()}
}

func dataEnv(t *testing.T) map[string]string {
	return map[string]string{"GATEHOUSE_DATA_DIR": filepath.Join(t.TempDir(), "data")}
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
	return v
}

func TestSkillListShowsBundledSkills(t *testing.T) {
	env := dataEnv(t)
	r := cli(t, env, "skill", "list", "--json")
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	got := decode[struct {
		Skills []SkillSummary `json:"skills"`
	}](t, r.stdout)
	status := map[string]bool{}
	for _, s := range got.Skills {
		status[s.Name] = s.Execution.Available
		if s.RootOrigin != "bundled" || !s.Valid {
			t.Errorf("%s: %+v", s.Name, s)
		}
	}
	if len(status) != 3 || !status["memory-organization"] || !status["text-metrics"] || status["commit-message-style"] {
		t.Fatalf("bundled skills: %v", status)
	}
	fi, err := os.Stat(env["GATEHOUSE_DATA_DIR"])
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data dir mode: %v %v", fi.Mode(), err)
	}
	human := cli(t, env, "skill", "list")
	if human.status != 0 || !strings.Contains(human.stdout, "memory-organization") || !strings.Contains(human.stdout, "prompt-only") {
		t.Fatalf("human list: %s", human.stdout)
	}
}

func TestSkillInspectJSONShape(t *testing.T) {
	env := dataEnv(t)
	r := cli(t, env, "skill", "inspect", "memory-organization", "--json")
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal([]byte(r.stdout), &raw)
	for _, k := range []string{"name", "root", "frontmatter", "unknown_fields", "resources", "execution"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("missing %q", k)
		}
	}
	var ex map[string]json.RawMessage
	json.Unmarshal(raw["execution"], &ex)
	for _, k := range []string{"available", "revision", "manifest", "issues", "unsupported"} {
		if _, ok := ex[k]; !ok {
			t.Errorf("execution missing %q", k)
		}
	}
	in := decode[SkillInspection](t, r.stdout)
	if !in.Execution.Available || !strings.HasPrefix(in.Execution.Revision, "sha256:") || in.Frontmatter.Name != "memory-organization" {
		t.Fatalf("%+v", in.Execution)
	}

	// The same bundle inspected by path has the same revision.
	byPath := cli(t, env, "skill", "inspect", filepath.Join(env["GATEHOUSE_DATA_DIR"], "bundled", "memory-organization"), "--json")
	if p := decode[SkillInspection](t, byPath.stdout); p.Execution.Revision != in.Execution.Revision || p.RootOrigin != "path" {
		t.Fatalf("by path: %+v", p.Execution)
	}
	human := cli(t, env, "skill", "inspect", "text-metrics")
	if human.status != 0 || !strings.Contains(human.stdout, "revision     sha256:") {
		t.Fatalf("human inspect: %s", human.stdout)
	}
}

func TestInspectionWithIssuesStillExitsZero(t *testing.T) {
	env := dataEnv(t)
	dir := filepath.Join(t.TempDir(), "broken")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: broken\ndescription: d\n---\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "execution.json"), []byte(`{"schemaVersion":1,"timeoutMs":0}`), 0o644)
	r := cli(t, env, "skill", "inspect", dir, "--json")
	in := decode[SkillInspection](t, r.stdout)
	if r.status != 0 || in.Execution.Available || len(in.Execution.Issues) == 0 {
		t.Fatalf("status %d %+v", r.status, in.Execution)
	}
}

func TestStructuredErrors(t *testing.T) {
	env := dataEnv(t)
	for _, c := range []struct {
		args   []string
		status int
		code   string
	}{
		{[]string{"skill", "inspect", "no-such-skill"}, 1, "skill_not_found"},
		{[]string{"skill", "inspect", "./no/such/dir"}, 1, "not_a_skill"},
		{[]string{"skill", "inspect"}, 2, "usage"},
		{[]string{"skill", "list", "--bogus"}, 2, "usage"},
		{[]string{"skill", "frobnicate"}, 2, "usage"},
		{[]string{"frobnicate"}, 2, "usage"},
		{[]string{"skill", "roots", "add", "/no/such/dir"}, 1, "invalid_root"},
		{[]string{"skill", "roots", "remove", "/never/added"}, 1, "unknown_root"},
	} {
		r := cli(t, env, c.args...)
		e := decode[map[string]any](t, strings.TrimSpace(r.stderr))
		if r.status != c.status || e["code"] != c.code || e["error"] != true || e["category"] == "" || e["message"] == "" {
			t.Errorf("%v: status %d stderr %s", c.args, r.status, r.stderr)
		}
		if strings.Contains(r.stderr, "goroutine") {
			t.Errorf("%v: stack trace leaked", c.args)
		}
	}
}

func TestHelpEverywhere(t *testing.T) {
	env := dataEnv(t)
	for _, args := range [][]string{
		{"--help"}, {"help"}, {"skill", "--help"}, {"skill", "list", "--help"}, {"skill", "inspect", "-h"},
		{"skill", "roots", "--help"}, {"skill", "run", "--help"}, {"doctor", "--help"}, {"runs", "--help"},
	} {
		r := cli(t, env, args...)
		if r.status != 0 || !strings.Contains(r.stdout, "Usage: gatehouse") {
			t.Errorf("%v: status %d out %q err %q", args, r.status, r.stdout, r.stderr)
		}
	}
}

func TestSettingsRootsWinOverBundled(t *testing.T) {
	env := dataEnv(t)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "text-metrics"), 0o755)
	os.WriteFile(filepath.Join(root, "text-metrics", "SKILL.md"), []byte("---\nname: text-metrics\ndescription: My own text metrics.\n---\n"), 0o644)
	if r := cli(t, env, "skill", "roots", "add", root); r.status != 0 {
		t.Fatal(r.stderr)
	}
	if r := cli(t, env, "skill", "roots", "add", root); r.status == 0 {
		t.Fatal("duplicate root accepted")
	}
	in := decode[SkillInspection](t, cli(t, env, "skill", "inspect", "text-metrics", "--json").stdout)
	if in.RootOrigin != "settings" || in.Root != root || len(in.Shadowed) != 1 || in.Shadowed[0].Root.Origin != "bundled" || in.Execution.Reason != "prompt_only" {
		t.Fatalf("settings root must win: %+v", in)
	}
	roots := decode[struct {
		Roots []struct{ Path, Origin string }
	}](t, cli(t, env, "skill", "roots", "--json").stdout)
	if len(roots.Roots) != 2 || roots.Roots[1].Path != root {
		t.Fatalf("roots %+v", roots)
	}
	if r := cli(t, env, "skill", "roots", "remove", root); r.status != 0 {
		t.Fatal(r.stderr)
	}
	in = decode[SkillInspection](t, cli(t, env, "skill", "inspect", "text-metrics", "--json").stdout)
	if in.RootOrigin != "bundled" {
		t.Fatalf("after remove: %+v", in.RootOrigin)
	}
}

func TestDoctor(t *testing.T) {
	env := dataEnv(t)
	r := cli(t, env, "doctor", "--json")
	if r.status != 0 {
		t.Fatal(r.stderr)
	}
	got := decode[struct{ Checks []DoctorCheck }](t, r.stdout)
	seen := map[string]string{}
	for _, c := range got.Checks {
		seen[c.Name] = c.Status
	}
	for _, n := range []string{"go", "data directory", "sqlite", "node runtime pin", "skill root"} {
		if seen[n] != "ok" {
			t.Errorf("%s: %q (%+v)", n, seen[n], got.Checks)
		}
	}
	env["GATEHOUSE_NODE"] = "/no/such/node"
	env["GATEHOUSE_DATA_DIR"] = filepath.Join(t.TempDir(), "fresh")
	got = decode[struct{ Checks []DoctorCheck }](t, cli(t, env, "doctor", "--json").stdout)
	for _, c := range got.Checks {
		if c.Name == "node runtime pin" && c.Status != "missing" {
			t.Errorf("unusable GATEHOUSE_NODE: %+v", c)
		}
	}
}

func TestDataDirRules(t *testing.T) {
	home := t.TempDir()
	get := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GATEHOUSE_DATA_DIR": "/x/y", "XDG_DATA_HOME": "/xdg", "HOME": home}, "/x/y"},
		{map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": home}, "/xdg/gatehouse"},
		{map[string]string{"XDG_DATA_HOME": "relative", "HOME": home}, filepath.Join(home, ".local/share/gatehouse")},
		{map[string]string{"HOME": home}, filepath.Join(home, ".local/share/gatehouse")},
	} {
		if got, err := DataDir(get(c.env)); err != nil || got != c.want {
			t.Errorf("%v: %s %v", c.env, got, err)
		}
	}
	if _, err := DataDir(get(map[string]string{"GATEHOUSE_DATA_DIR": "rel"})); err == nil {
		t.Error("relative GATEHOUSE_DATA_DIR accepted")
	}
	if _, err := DataDir(get(nil)); err == nil {
		t.Error("no HOME accepted")
	}

	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o755)
	if err := EnsureDataDir(open); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Errorf("world-readable data dir: %v", err)
	}
	if fi, _ := os.Stat(open); fi.Mode().Perm() != 0o755 {
		t.Error("EnsureDataDir silently changed the mode")
	}
	link := filepath.Join(t.TempDir(), "link")
	private := filepath.Join(t.TempDir(), "private")
	os.Mkdir(private, 0o700)
	os.Symlink(private, link)
	if err := EnsureDataDir(link); err == nil {
		t.Error("symlinked data dir accepted")
	}
	r := cli(t, map[string]string{"GATEHOUSE_DATA_DIR": open}, "skill", "list")
	if r.status != 1 || !strings.Contains(r.stderr, `"code":"data_dir"`) {
		t.Errorf("CLI with open data dir: %d %s", r.status, r.stderr)
	}
}

func TestBundledExtractionIsIdempotentAndReplacesStaleCopies(t *testing.T) {
	env := dataEnv(t)
	cli(t, env, "skill", "list")
	dir := filepath.Join(env["GATEHOUSE_DATA_DIR"], "bundled")
	skill := filepath.Join(dir, "text-metrics", "SKILL.md")
	st1, _ := os.Stat(skill)
	cli(t, env, "skill", "list")
	if st2, _ := os.Stat(skill); !os.SameFile(st1, st2) {
		t.Fatal("an up-to-date copy was rewritten")
	}
	os.WriteFile(filepath.Join(dir, digestFile), []byte("stale"), 0o644)
	os.WriteFile(filepath.Join(dir, "leftover.md"), []byte("---\nname: leftover\ndescription: d\n---\n"), 0o644)
	cli(t, env, "skill", "list")
	if _, err := os.Stat(filepath.Join(dir, "leftover.md")); !os.IsNotExist(err) {
		t.Fatal("stale bundled copy not replaced whole")
	}
	entries, _ := os.ReadDir(env["GATEHOUSE_DATA_DIR"])
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") || strings.Contains(e.Name(), ".old-") {
			t.Fatalf("leftover %s", e.Name())
		}
	}
}

func TestStagingLeftoversSweptAtStart(t *testing.T) {
	env := dataEnv(t)
	cli(t, env, "skill", "list")
	left := filepath.Join(env["GATEHOUSE_DATA_DIR"], "runs", "i999999999.1.crashed")
	os.MkdirAll(left, 0o700)
	os.WriteFile(filepath.Join(left, "run.mjs"), []byte("x"), 0o400)
	cli(t, env, "skill", "list")
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatal("staging leftover survived start-up")
	}
}

// `agent add` prints the agent's MCP client configuration (endpoint, both
// .mcp.json forms, both claude command lines) carrying its own token, and
// the --json form gives the same snippets the app's AddAgent returns.
func TestAgentAddPrintsConnection(t *testing.T) {
	env := dataEnv(t)
	r := cli(t, env, "agent", "add", "snippet-agent", "--json")
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	got := decode[struct {
		Token   string            `json:"token"`
		Connect agents.Connection `json:"connect"`
	}](t, r.stdout)
	dir := env["GATEHOUSE_DATA_DIR"]
	exe, _ := os.Executable()
	if want := agents.Connect("http://127.0.0.1:7420", exe, dir, got.Token); got.Connect != want {
		t.Fatalf("connect %+v, want %+v", got.Connect, want)
	}
	r = cli(t, env, "agent", "add", "snippet-agent-2")
	if r.status != 0 {
		t.Fatalf("status %d: %s", r.status, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	token := ""
	for i, l := range lines {
		if strings.HasPrefix(l, "token (shown once") && i+1 < len(lines) {
			token = lines[i+1]
		}
	}
	if token == "" || !strings.Contains(r.stdout, agents.Connect("http://127.0.0.1:7420", exe, dir, token).Text()) {
		t.Fatalf("agent add printed %q", r.stdout)
	}
}

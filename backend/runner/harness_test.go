package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/confine"
	"github.com/gatehouse/gatehouse/backend/proctree"
	"github.com/gatehouse/gatehouse/backend/store"
)

// The test binary has one supervisor (one owner of child waits per
// process), one pinned Node and one runner over a real SQLite history.
var (
	testSup     *proctree.Supervisor
	testPin     Pin
	testRunner  *Runner
	testDB      *store.DB
	testJournal *Journal
	testRunsDir string
)

func TestMain(m *testing.M) {
	confine.MaybeLaunch()                    // this test binary is the launcher of its scripts
	if err := confine.Harden(); err != nil { // as the gatehouse binary is
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	node, err := FindNode(os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner tests need node:", err)
		return 1
	}
	// Pin before the supervisor exists: PinNode uses os/exec.
	if testPin, err = PinNode(context.Background(), node); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "gatehouse-runner-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if testDB, err = store.Open(filepath.Join(dir, store.FileName)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testDB.Close()
	if testSup, err = proctree.NewSupervisor(proctree.Options{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testSup.Close()
	testRunsDir = filepath.Join(dir, "runs with spaces $(touch pwned); `x`")
	testJournal = NewJournal(testDB, func(err error) { panic(err) })
	if testRunner, err = New(Config{Supervisor: testSup, RunsDir: testRunsDir, Journal: testJournal, History: testDB}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer testRunner.Close()
	return m.Run()
}

const echoOutput = `{"type":"object","properties":{"echo":{"anyOf":[{"type":"string"},{"type":"object","properties":{}}]}},"required":["echo"],"additionalProperties":false}`

// testBundle writes a bundle with one script from testdata/scripts and
// returns the inspected manifest and snapshot.
func testBundle(t testing.TB, script string, over map[string]any) (dir string, ex bundle.Execution) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "scripts", script))
	if err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(t.TempDir(), "my bundle; $(rm -rf /)")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: test\ndescription: d\n---\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripts", script), src, 0o644)
	m := map[string]any{
		"schemaVersion": 1, "entrypoint": "scripts/" + script, "files": []string{"scripts/" + script},
		"inputSchema":  json.RawMessage(`{"type":"object","properties":{}}`),
		"outputSchema": json.RawMessage(echoOutput),
		"timeoutMs":    5000, "maxOutputBytes": 65536,
	}
	for k, v := range over {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, "execution.json"), b, 0o644)
	ex = bundle.Inspect(dir, bundle.InspectOptions{Runtime: testPin.Check})
	if !ex.Available {
		t.Fatalf("test bundle unavailable: %v", ex.Issues)
	}
	return dir, ex
}

func request(t testing.TB, ex bundle.Execution, input string) Request {
	t.Helper()
	ws, err := ResolveWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return Request{RunID: newID(), Skill: "test", Agent: "local", AuthorizedBy: "test", Snapshot: ex.Snapshot,
		Manifest: ex.Manifest, Invocation: []byte(input), Workspace: ws, Pin: testPin}
}

func runScript(t testing.TB, script, input string, over map[string]any) Result {
	t.Helper()
	_, ex := testBundle(t, script, over)
	return testRunner.Run(context.Background(), request(t, ex, input))
}

func wantStatus(t testing.TB, r Result, status Status, code string) {
	t.Helper()
	if r.Envelope.Status != status {
		t.Fatalf("status %s, want %s: %+v", r.Envelope.Status, status, r.Envelope.Errors)
	}
	if code != "" {
		for _, e := range r.Envelope.Errors {
			if e.Code == code {
				return
			}
		}
		t.Fatalf("no error %s in %+v", code, r.Envelope.Errors)
	}
}

// leftovers scans /proc command lines for marker; it trusts nothing the
// runner reports.
func leftovers(marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if i := strings.LastIndexByte(string(st), ')'); i > 0 && i+2 < len(st) && st[i+2] != 'Z' {
				out = append(out, e.Name()+":"+strings.ReplaceAll(string(b), "\x00", " "))
			}
		}
	}
	return out
}

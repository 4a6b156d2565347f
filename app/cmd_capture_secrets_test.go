package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/policy"
)

// TestCaptureProcessOutputFilesHoldNoSecret captures, through the CLI, a
// program that is typed a sensitive password (echoed and printed back)
// and given a secret alias it prints, then searches every byte the
// capture left: stdout, the saved Evidence file, and the data directory
// with its SQLite index.
func TestCaptureProcessOutputFilesHoldNoSecret(t *testing.T) {
	const password, secret = "pw-Zq81hunter", "tok-9f3e2a7c41"
	work := t.TempDir()
	env := captureEnv(t, work)
	env[policy.CaptureEnvAllowedEnv] = `["PATH","API_TOKEN"]`
	path := writeScenario(t, work, `printf 'password: '; read p; echo "you typed $p"; echo "token $API_TOKEN"; echo "$p$API_TOKEN" > leak.txt`, func(m map[string]any) {
		m["environment"] = map[string]any{"PATH": "/usr/bin:/bin", "API_TOKEN": secret}
		m["secret_aliases"] = []any{"API_TOKEN"}
		m["filesystem_roots"] = []any{work}
		m["events"] = []any{map[string]any{"type": "input", "at_ms": 100, "data": password + "\r", "sensitive": true}}
	})
	r := cli(t, env, "capture-process", path)
	if r.status != 0 {
		t.Fatalf("capture: %d %s", r.status, r.stderr)
	}
	if !strings.Contains(r.stdout, `you typed <redacted>`) || !strings.Contains(r.stdout, `token <redacted>`) ||
		!strings.Contains(r.stdout, `<redacted-input:14-bytes>`) {
		t.Errorf("the Evidence does not show the redactions: %s", r.stdout)
	}
	check := func(name string, b []byte) {
		for _, s := range []string{password, secret} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s contains %q", name, s)
			}
		}
	}
	check("stdout", []byte(r.stdout+r.stderr))
	files := 0
	filepath.WalkDir(env["GATEHOUSE_DATA_DIR"], func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			check(p, b)
			files++
		}
		return nil
	})
	if files < 2 { // the Evidence file and the database
		t.Errorf("only %d files in the data directory", files)
	}
}

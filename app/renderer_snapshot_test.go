package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureProcessUsesRendererSnapshot: the first capture-process of a
// data directory leaves the renderer's startup snapshot in its
// cache/renderer (mode 0600), and doctor then finds it verified; a
// tampered one is rebuilt, which doctor says.
func TestCaptureProcessUsesRendererSnapshot(t *testing.T) {
	work := t.TempDir()
	env := captureEnv(t, work)
	path := writeScenario(t, work, "printf 'hello\\n'", nil)
	if r := cli(t, env, "capture-process", path); r.status != 0 || r.stderr != "" {
		t.Fatalf("status %d, stderr %s", r.status, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(env["GATEHOUSE_DATA_DIR"], "cache", "renderer", "renderer-*.snapshot"))
	if len(files) != 1 {
		t.Fatalf("snapshot files %v", files)
	}
	if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("snapshot file %v %v", fi, err)
	}
	snapshotLine := func() DoctorCheck {
		t.Helper()
		got := decode[struct{ Checks []DoctorCheck }](t, cli(t, env, "doctor", "--json").stdout)
		for _, c := range got.Checks {
			if c.Name == "renderer snapshot" {
				return c
			}
		}
		t.Fatalf("no renderer snapshot line in %+v", got.Checks)
		return DoctorCheck{}
	}
	if c := snapshotLine(); c.Status != "ok" || !strings.Contains(c.Detail, "verified") {
		t.Errorf("doctor: %+v", c)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-100] ^= 1
	if err := os.WriteFile(files[0], b, 0o600); err != nil {
		t.Fatal(err)
	}
	if c := snapshotLine(); c.Status != "ok" || !strings.Contains(c.Detail, "rebuilt") || !strings.Contains(c.Detail, "SHA-256") {
		t.Errorf("doctor after tampering: %+v", c)
	}
}

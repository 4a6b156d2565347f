package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/policy"
)

// pathTree builds bin/X11 -> . (as Debian's /usr/bin/X11), bin/tool
// (prints its working directory and argv[0]), outside/evil.sh (leaves a
// mark when it runs), ws/sub and ws/inlink -> sub, ws/outlink -> ../outside,
// and a policy whose roots are bin and ws.
func pathTree(t *testing.T) (dir, mark string, pol policy.CaptureSettings) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mark = filepath.Join(dir, "evil-ran")
	for _, d := range []string{"bin", "outside", "ws/sub"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"bin/tool":        "#!/bin/sh\necho \"cwd=$(pwd -P) arg0=$0\"\n",
		"outside/evil.sh": "#!/bin/sh\ntouch " + mark + "\n",
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"bin/X11": ".", "ws/inlink": "sub", "ws/outlink": "../outside"} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	pol = policy.DefaultCaptureSettings()
	pol.Enabled, pol.AllowExternalNetwork = true, true // network_access is "host", the only value
	pol.ExecutableRoots, pol.WorkingRoots = []string{filepath.Join(dir, "bin")}, []string{filepath.Join(dir, "ws")}
	pol.AllowedEnv = []string{"PATH"}
	return dir, mark, pol
}

// TestCaptureRefusesPathEscapes: the attacker's scenarios stay inside the
// roots as text but reach outside through symlinks; nothing may run.
func TestCaptureRefusesPathEscapes(t *testing.T) {
	dir, mark, pol := pathTree(t)
	cases := []struct {
		name, exe, wd string
		roots         []string
		want          string
	}{
		{"executable via X11 and ..", dir + "/bin/X11/X11/../../outside/evil.sh", dir + "/ws/sub", nil, policy.ReasonUncleanPath},
		{"working directory via link and ..", dir + "/bin/tool", dir + "/ws/outlink/../sub", nil, policy.ReasonUncleanPath},
		{"working directory is a link outside", dir + "/bin/tool", dir + "/ws/outlink", nil, policy.ReasonWorkingDirectoryOutsideRoots},
		{"filesystem root is a link outside", dir + "/bin/tool", dir + "/ws/sub", []string{dir + "/ws/outlink"}, policy.ReasonFilesystemRootOutsideRoots},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := obj{"approved": true, "executable": c.exe, "working_directory": c.wd, "environment": obj{"PATH": "/usr/bin:/bin"}}
			if c.roots != nil {
				m["filesystem_roots"] = c.roots
			}
			sc := parseOK(t, mustJSON(t, m))
			_, err := Capture(context.Background(), newSupervisor(t), sc, Options{Policy: pol, TempDir: t.TempDir(), RunID: "paths-" + strings.ReplaceAll(c.name, " ", "-")})
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.Reason != c.want {
				t.Fatalf("err = %v, want policy reason %s", err, c.want)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Fatal("the program outside the roots ran")
			}
		})
	}
}

// TestCaptureExecutesResolvedPaths: an allowed scenario written through
// symlinks runs the resolved program in the resolved directory, with
// argv[0] as written.
func TestCaptureExecutesResolvedPaths(t *testing.T) {
	dir, _, pol := pathTree(t)
	exe := dir + "/bin/X11/tool"
	m := obj{"approved": true, "executable": exe, "working_directory": dir + "/ws/inlink",
		"environment": obj{"PATH": "/usr/bin:/bin"}, "filesystem_roots": []string{dir + "/ws/inlink/state"}}
	sc := parseOK(t, mustJSON(t, m))
	opts := Options{Policy: pol, TempDir: t.TempDir(), RunID: "paths-resolved", GatehouseVersion: "test", ProviderVersion: "test", Node: testNode(t)}
	rec := capture(t, sc, opts)
	out := output(rec)
	if !strings.Contains(out, "cwd="+dir+"/ws/sub") && !strings.Contains(out, "cwd="+PlaceholderWorkingDirectory) {
		t.Fatalf("output %q: not run in the resolved directory", out)
	}
	if !strings.Contains(out, "arg0="+exe) && !strings.Contains(out, "arg0="+PlaceholderExecutable) {
		t.Fatalf("output %q: argv[0] is not as written", out)
	}
	want, err := fileSHA256(dir + "/bin/tool")
	if err != nil || rec.Manifest.ExecutableSHA256 != want {
		t.Fatalf("executable digest %s, want %s (%v)", rec.Manifest.ExecutableSHA256, want, err)
	}
}

package confine

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// The embedded native launcher is the build of launcher/launch.c by
// launcher/build.sh: rebuilt here, byte for byte.
func TestEmbeddedLauncherIsBuiltFromSource(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the native launcher is built for linux/amd64 only")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	out := filepath.Join(t.TempDir(), "launch")
	if b, err := exec.Command("launcher/build.sh", out).CombinedOutput(); err != nil {
		t.Fatalf("build.sh: %v\n%s", err, b)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(built, nativeELF) {
		t.Fatal("launcher/gatehouse-launch.amd64 is not the build of launcher/launch.c: run `make launcher`")
	}
	if ok, err := NativeLauncher(); !ok {
		t.Fatalf("the native launcher does not load: %v", err)
	}
}

// launch runs req through the launcher it names, with descriptors 0-3
// and the report pipe as 4, in a network namespace when req asks, and
// returns the report (or refusal) and the target's stdout.
func launch(t *testing.T, req Request) (*Report, string, error) {
	t.Helper()
	path, args, env, err := req.Command()
	if err != nil {
		t.Fatal(err)
	}
	if req.GoLauncher == (path == nativePath) {
		t.Fatalf("GoLauncher=%v started %s", req.GoLauncher, path)
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	devnull, _ := os.Open(os.DevNull)
	defer devnull.Close()
	var stdout bytes.Buffer
	cmd := &exec.Cmd{Path: path, Args: args, Env: env, Dir: "/", Stdout: &stdout,
		ExtraFiles: req.Files(devnull, wr), SysProcAttr: &syscall.SysProcAttr{}}
	if req.NetNamespace {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET
	}
	if err := cmd.Start(); err != nil {
		wr.Close()
		t.Fatal(err)
	}
	wr.Close()
	rep, rerr := req.ReadReport(rd)
	cmd.Wait()
	return rep, stdout.String(), rerr
}

// Both launchers enforce the same thing, seen from the target's side:
// reading outside the allowed paths, writing the read-write directory,
// writing a read-only one, connecting to a loopback TCP server.
func TestLaunchersEnforceTheSame(t *testing.T) {
	if KernelABI() < 4 {
		t.Skip("needs Landlock ABI 4")
	}
	ws, ro, secret := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "secret")
	os.WriteFile(secret, []byte("s"), 0o600)
	os.WriteFile(filepath.Join(ro, "r"), []byte("r"), 0o600)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	script := fmt.Sprintf(`r() { if eval "$1" >/dev/null 2>&1; then echo "$2 yes"; else echo "$2 no"; fi; }
r 'cat %[1]s' read-outside
r 'cat %[2]s/r' read-ro
r 'echo x > %[3]s/w' write-rw
r 'echo x > %[2]s/w' write-ro
r 'exec 5<>/dev/tcp/127.0.0.1/%[4]d' tcp`, secret, ro, ws, l.Addr().(*net.TCPAddr).Port)
	want := map[string]string{
		FilesystemWorkspace: "read-outside no\nread-ro yes\nwrite-rw yes\nwrite-ro no\ntcp no\n",
		FilesystemOff:       "read-outside yes\nread-ro yes\nwrite-rw yes\nwrite-ro yes\ntcp yes\n",
	}
	for _, s := range []Settings{Default(), {Filesystem: FilesystemOff, Network: NetworkAllow}} {
		var reports []*Report
		for _, goLauncher := range []bool{false, true} {
			req := Request{Settings: s, ABILimit: -1, ReadOnly: []string{ro}, ReadWrite: []string{ws},
				Path: "/bin/bash", Args: []string{"bash", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"}, GoLauncher: goLauncher}
			rep, out, err := launch(t, req)
			if err != nil {
				t.Fatalf("%+v go=%v: %v", s, goLauncher, err)
			}
			if out != want[s.Filesystem] {
				t.Errorf("%+v go=%v: the target saw\n%s", s, goLauncher, out)
			}
			os.Remove(filepath.Join(ws, "w"))
			os.Remove(filepath.Join(ro, "w"))
			reports = append(reports, rep)
		}
		if !reflect.DeepEqual(reports[0], reports[1]) {
			t.Errorf("%+v: native %+v, Go %+v", s, reports[0], reports[1])
		}
	}
}

// For every Landlock ABI (simulated by the limit) the two launchers agree
// on what is enforced or refused, so the native launcher's table of what
// each ABI handles matches go-landlock's; with a network namespace too.
func TestLaunchersAgreeOnEveryABI(t *testing.T) {
	kernel := KernelABI()
	ws := t.TempDir()
	for abi := 0; abi <= min(kernel, maxKnownABI); abi++ {
		for _, netns := range []bool{false, true} {
			for _, s := range []Settings{Default(), {Filesystem: FilesystemOff, Network: NetworkDeny}, {Filesystem: FilesystemWorkspace, Network: NetworkAllow}} {
				var got []string
				for _, goLauncher := range []bool{false, true} {
					req := Request{Settings: s, ABILimit: abi, NetNamespace: netns, ReadWrite: []string{ws},
						Path: "/bin/true", Args: []string{"true"}, GoLauncher: goLauncher}
					rep, _, err := launch(t, req)
					switch {
					case IsUnavailable(err):
						got = append(got, "unavailable")
					case err != nil:
						t.Fatalf("abi %d %+v netns=%v go=%v: %v", abi, s, netns, goLauncher, err)
					default:
						got = append(got, rep.Summary())
					}
				}
				want, werr := Check(s, netns, abi)
				wantS := "unavailable"
				if werr == nil {
					wantS = want.Summary()
				}
				if got[0] != wantS || got[1] != wantS {
					t.Errorf("abi %d %+v netns=%v: native %q, Go %q, plan %q", abi, s, netns, got[0], got[1], wantS)
				}
			}
		}
	}
}

// A launch error names its path with every character intact, and the
// report line stays one parseable line.
func TestLauncherErrorsQuotePaths(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "a\"b\\c\nd\x1be")
	for _, goLauncher := range []bool{false, true} {
		req := Request{Settings: Default(), ABILimit: -1, ReadWrite: []string{missing},
			Path: "/bin/true", Args: []string{"true"}, GoLauncher: goLauncher}
		_, _, err := launch(t, req)
		if err == nil || IsUnavailable(err) || !strings.Contains(err.Error(), missing) {
			t.Errorf("go=%v: %v", goLauncher, err)
		}
		var u *UnavailableError
		if errors.As(err, &u) {
			t.Errorf("go=%v: a missing workspace is not 'unavailable': %v", goLauncher, err)
		}
	}
}

// A launch error about a path as long as the kernel takes is still one
// well-formed report line, for both launchers: the native launcher cuts
// the path, never the line's end (a cut end made the report malformed,
// losing what failed).
func TestLauncherErrorsOfLongPathsAreWellFormed(t *testing.T) {
	missing := t.TempDir()
	for len(missing) < 4000 {
		missing = filepath.Join(missing, strings.Repeat("m", 200))
	}
	for _, goLauncher := range []bool{false, true} {
		req := Request{Settings: Default(), ABILimit: -1, ReadWrite: []string{missing},
			Path: "/bin/true", Args: []string{"true"}, GoLauncher: goLauncher}
		_, _, err := launch(t, req)
		if err == nil || IsUnavailable(err) || strings.Contains(err.Error(), "malformed") ||
			!strings.HasPrefix(err.Error(), "confine: launcher: open "+missing[:1000]) {
			t.Errorf("go=%v: %.300v", goLauncher, err)
		}
	}
}

// A launch succeeds whatever descriptor numbers the caller's files have:
// the fork moves descriptors above the highest one passed before the exec
// of the launcher, so the launcher is passed as LauncherFD rather than
// found at a descriptor number of this process (a report pipe at 63 once
// overwrote the launcher's file at 64 that way).
func TestLaunchWithHighDescriptors(t *testing.T) {
	for n := 8; n < 200; n += 5 {
		rd, wr, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		high, err := syscall.Dup(int(wr.Fd()))
		if err == nil && high < n {
			syscall.Dup2(high, n)
			syscall.Close(high)
			high = n
		}
		wr.Close()
		hw := os.NewFile(uintptr(high), "report")
		req := Request{Settings: Default(), ABILimit: -1, ReadWrite: []string{t.TempDir()}, Path: "/bin/true", Args: []string{"true"}}
		path, args, env, _ := req.Command()
		devnull, _ := os.Open(os.DevNull)
		cmd := &exec.Cmd{Path: path, Args: args, Env: env, Dir: "/", ExtraFiles: req.Files(devnull, hw)}
		if err := cmd.Start(); err != nil {
			t.Fatalf("report at %d: %v", high, err)
		}
		hw.Close()
		devnull.Close()
		_, rerr := req.ReadReport(rd)
		cmd.Wait()
		rd.Close()
		if rerr != nil && !IsUnavailable(rerr) {
			t.Fatalf("report at %d: %v", high, rerr)
		}
	}
}

// A rule the kernel will not take (a file given where a directory's rights
// are granted: landlock_add_rule fails with EINVAL) is reported the same
// way by both launchers, and the target does not run under either.
func TestLaunchersAgreeOnARuleTheKernelRefuses(t *testing.T) {
	if KernelABI() < 1 {
		t.Skip("no Landlock")
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("f"), 0o600)
	var errs []error
	for _, goLauncher := range []bool{false, true} {
		req := Request{Settings: Default(), ABILimit: -1, ReadOnly: []string{file}, ReadWrite: []string{t.TempDir()},
			Path: "/bin/echo", Args: []string{"echo", "ran"}, Env: []string{"PATH=/usr/bin:/bin"}, GoLauncher: goLauncher}
		rep, out, err := launch(t, req)
		if err == nil {
			// The kernel took the rule (a go-landlock or kernel that
			// narrows a file's rights): then both must run it alike.
			t.Logf("go=%v: ran (%+v) %q", goLauncher, rep, out)
		}
		errs = append(errs, err)
	}
	if (errs[0] == nil) != (errs[1] == nil) || (errs[0] != nil && IsUnavailable(errs[0]) != IsUnavailable(errs[1])) {
		t.Fatalf("the launchers disagree: native %v (unavailable %v), Go %v (unavailable %v)",
			errs[0], IsUnavailable(errs[0]), errs[1], IsUnavailable(errs[1]))
	}
}

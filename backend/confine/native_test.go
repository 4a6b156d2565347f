package confine

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// Where memory files may not be executed (vm.memfd_noexec = 2, set here
// in a PID namespace of the test's own, where it holds), the native
// launcher is reported unavailable with the kernel's reason and launches
// use the Go launcher, which still enforces everything.
func TestNativeLauncherThatCannotExecFallsBack(t *testing.T) {
	if os.Getenv("GATEHOUSE_TEST_NOEXEC_MEMFD") == "1" {
		if err := os.WriteFile("/proc/sys/vm/memfd_noexec", []byte("2"), 0); err != nil {
			os.Stdout.WriteString("skip: " + err.Error() + "\n")
			return
		}
		ok, why := NativeLauncher()
		os.Stdout.WriteString("native=" + map[bool]string{true: "yes", false: "no (" + errString(why) + ")"}[ok] + "\n")
		req := Request{Settings: Default(), ABILimit: -1, ReadOnly: []string{"/"},
			Path: "/bin/echo", Args: []string{"echo", "launched"}}
		if path, _, _, err := req.Command(); err != nil || path != "/proc/self/exe" {
			os.Stdout.WriteString("launch failed: not through the Go launcher: " + path + " " + errString(err) + "\n")
			return
		}
		req.GoLauncher = true // the path Command chose; launch checks it against the flag
		rep, out, err := launch(t, req)
		if err != nil || !rep.Has(Filesystem) || !rep.Has(TCP) || out != "launched\n" {
			os.Stdout.WriteString("launch failed: " + errString(err) + "\n")
			return
		}
		os.Stdout.WriteString("launch ok\n")
		return
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" || KernelABI() < 4 || os.Geteuid() != 0 {
		t.Skip("needs the native launcher, Landlock ABI 4 and root (for the PID namespace)")
	}
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(self, "-test.run=^TestNativeLauncherThatCannotExecFallsBack$")
	cmd.Env = append(os.Environ(), "GATEHOUSE_TEST_NOEXEC_MEMFD=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("helper: %v\n%s", err, out.Bytes())
	}
	got := out.String()
	if strings.HasPrefix(got, "skip: ") {
		t.Skip(got)
	}
	if !strings.Contains(got, "native=no (confine: memfd_create: permission denied)") || !strings.Contains(got, "launch ok\n") {
		t.Fatalf("a native launcher that cannot be executed must be reported unavailable and launches must use the Go launcher:\n%s", got)
	}
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

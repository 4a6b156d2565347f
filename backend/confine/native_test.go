package confine

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
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

// The memory file the native launcher runs from holds exactly the
// embedded bytes and is sealed: opened for writing by anyone who can
// reach it, it can be neither written, resized nor mapped writable, and
// the seals cannot be removed.
func TestNativeLauncherIsSealed(t *testing.T) {
	file, err := nativeLauncher()
	if err != nil {
		t.Skip("no native launcher here:", err)
	}
	path := fmt.Sprintf("/proc/self/fd/%d", file.Fd())
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, nativeELF) {
		t.Fatalf("the memory file does not hold the embedded launcher: %v", err)
	}
	fd, err := unix.Open(path, unix.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	seals, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if want := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE; err != nil || seals&want != want {
		t.Fatalf("seals %#x (%v)", seals, err)
	}
	if _, err := unix.Pwrite(fd, []byte{0xcc}, 0); err == nil {
		t.Error("a byte of the launcher was overwritten")
	}
	if err := unix.Ftruncate(fd, 1); err == nil {
		t.Error("the launcher was shrunk")
	}
	if err := unix.Ftruncate(fd, int64(len(nativeELF))+4096); err == nil {
		t.Error("the launcher was grown")
	}
	if m, err := unix.Mmap(fd, 0, len(nativeELF), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err == nil {
		unix.Munmap(m)
		t.Error("the launcher was mapped writable")
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, 0); err == nil {
		// F_SEAL_SEAL makes every further F_ADD_SEALS fail, even of nothing.
		t.Error("the seals are not sealed")
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, nativeELF) {
		t.Fatal("the launcher's bytes changed")
	}
}

// An attacker's side of a double close elsewhere in the process: the
// launcher's descriptor is closed and its number taken by an executable
// regular file (here atomically, by dup3 over it), or just closed. The
// next launch must not execute what the number now names: it loads the
// launcher again and runs the target under it.
func TestNativeLauncherDescriptorTakenOverIsNotExecuted(t *testing.T) {
	if _, err := nativeLauncher(); err != nil {
		t.Skip("no native launcher here:", err)
	}
	evil := filepath.Join(t.TempDir(), "evil")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\necho PWNED\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, how := range []string{"reused by an executable file", "closed"} {
		t.Run(strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
			f, err := nativeLauncher()
			if err != nil {
				t.Fatal(err)
			}
			n := int(f.Fd())
			if how == "closed" {
				unix.Close(n)
			} else {
				fd, err := unix.Open(evil, unix.O_RDONLY|unix.O_CLOEXEC, 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := unix.Dup3(fd, n, unix.O_CLOEXEC); err != nil {
					t.Fatal(err)
				}
				unix.Close(fd)
				t.Cleanup(func() { unix.Close(n) })
			}
			req := Request{Settings: Default(), ABILimit: -1, ReadOnly: []string{"/"},
				Path: "/bin/echo", Args: []string{"echo", "launched"}}
			rep, out, err := launch(t, req)
			if strings.Contains(out, "PWNED") {
				t.Fatalf("the file at the launcher's old descriptor %d was executed as the launcher", n)
			}
			if err != nil || rep == nil || out != "launched\n" {
				t.Fatalf("the launch after the descriptor was %s: %v, %q", how, err, out)
			}
			if g, err := nativeLauncher(); err != nil || int(g.Fd()) == n && how != "closed" {
				t.Fatalf("the launcher was not loaded again: %v", err)
			}
		})
	}
}

// When the launcher's descriptor was taken over and the launcher cannot be
// loaded again (here: no descriptor is left for a new memory file), the
// launch is refused with a clear error and the child is given no launcher
// descriptor at all, never the file that took the number.
func TestNativeLauncherThatCannotBeReloadedIsRefused(t *testing.T) {
	if os.Getenv("GATEHOUSE_TEST_NO_FDS") == "1" {
		f, err := nativeLauncher()
		if err != nil {
			os.Stdout.WriteString("skip: " + err.Error() + "\n")
			return
		}
		n := int(f.Fd())
		evil, err := unix.Open("/bin/true", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil || unix.Dup3(evil, n, unix.O_CLOEXEC) != nil {
			os.Stdout.WriteString("setup failed\n")
			return
		}
		unix.Close(evil)
		devnull, _ := os.Open(os.DevNull)
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 128, Max: 128}); err != nil {
			os.Stdout.WriteString("skip: " + err.Error() + "\n")
			return
		}
		for {
			if _, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
				break
			}
		}
		req := Request{Settings: Default(), ABILimit: -1, ReadOnly: []string{"/"}, Path: "/bin/true", Args: []string{"true"}}
		_, _, _, err = req.Command()
		os.Stdout.WriteString("command: " + errString(err) + "\n")
		files := req.Files(devnull, devnull)
		if len(files) != 3 || files[2] != nil {
			os.Stdout.WriteString("files: a launcher descriptor was given\n")
			return
		}
		os.Stdout.WriteString("files: none\n")
		return
	}
	if _, err := nativeLauncher(); err != nil {
		t.Skip("no native launcher here:", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command(self, "-test.run=^TestNativeLauncherThatCannotBeReloadedIsRefused$")
	cmd.Env = append(os.Environ(), "GATEHOUSE_TEST_NO_FDS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	got := string(out)
	if strings.HasPrefix(got, "skip: ") {
		t.Skip(got)
	}
	if !strings.Contains(got, "command: confine: the native launcher's descriptor was taken over (descriptor ") ||
		!strings.Contains(got, "names another file) and it cannot be loaded again: confine: memfd_create: too many open files") ||
		!strings.Contains(got, "files: none\n") {
		t.Fatalf("a launcher that cannot be verified or loaded again must refuse the launch:\n%s", got)
	}
}

package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// symlinkTree builds, under a fresh directory:
//
//	bin/X11 -> .            (as Debian ships /usr/bin/X11)
//	bin/tool                an allowed program
//	bin/out -> ../outside/evil.sh
//	outside/evil.sh         a program outside every root
//	ws/etclink -> ../outside
//	ws/sub/                 an allowed working directory
func symlinkTree(t *testing.T) (dir string, s CaptureSettings) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"bin", "outside", "ws/sub"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"bin/tool", "outside/evil.sh"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"bin/X11": ".", "bin/out": "../outside/evil.sh", "ws/etclink": "../outside"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	s = CaptureSettings{Enabled: true, ExecutableRoots: []string{filepath.Join(dir, "bin")},
		WorkingRoots: []string{filepath.Join(dir, "ws")}, AutoGrant: true}
	return dir, s
}

// TestCaptureSymlinkEscapes is the attacker's side of the path rule: every
// request here stays inside the roots as text but reaches a file or a
// directory outside them through a symlink, or relies on ".." after one.
func TestCaptureSymlinkEscapes(t *testing.T) {
	dir, s := symlinkTree(t)
	ok := CaptureRequest{Approved: true, Executable: filepath.Join(dir, "bin/tool"), WorkingDir: filepath.Join(dir, "ws/sub")}
	if _, reason, msg := s.ResolveCapture(ok); reason != "" {
		t.Fatalf("baseline refused: %s (%s)", reason, msg)
	}
	tests := []struct {
		name   string
		mutate func(*CaptureRequest)
		want   string
	}{
		{"executable through X11 -> . and ..", func(r *CaptureRequest) {
			r.Executable = filepath.Join(dir, "bin") + "/X11/X11/../../outside/evil.sh"
		}, ReasonUncleanPath},
		{"executable symlink to outside", func(r *CaptureRequest) { r.Executable = filepath.Join(dir, "bin/out") }, ReasonExecutableOutsideRoots},
		{"executable symlink via X11 to outside", func(r *CaptureRequest) { r.Executable = filepath.Join(dir, "bin/X11/out") }, ReasonExecutableOutsideRoots},
		{"working directory through link and ..", func(r *CaptureRequest) { r.WorkingDir = filepath.Join(dir, "ws") + "/etclink/../sub" }, ReasonUncleanPath},
		{"working directory is a link to outside", func(r *CaptureRequest) { r.WorkingDir = filepath.Join(dir, "ws/etclink") }, ReasonWorkingDirectoryOutsideRoots},
		{"working directory below a link to outside", func(r *CaptureRequest) { r.WorkingDir = filepath.Join(dir, "ws/etclink/deeper") }, ReasonWorkingDirectoryOutsideRoots},
		{"filesystem root is a link to outside", func(r *CaptureRequest) { r.FilesystemRoots = []string{filepath.Join(dir, "ws/etclink")} }, ReasonFilesystemRootOutsideRoots},
		{"filesystem root through link and ..", func(r *CaptureRequest) { r.FilesystemRoots = []string{filepath.Join(dir, "ws") + "/etclink/.."} }, ReasonUncleanPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ok
			tt.mutate(&r)
			got, reason, msg := s.ResolveCapture(r)
			if reason != tt.want {
				t.Fatalf("reason = %q (%s), want %q; resolved %+v", reason, msg, tt.want, got)
			}
		})
	}
}

// TestCaptureResolvedPathsReturned: an allowed request comes back with the
// paths the kernel will use, which are what the caller must execute/enter.
func TestCaptureResolvedPathsReturned(t *testing.T) {
	dir, s := symlinkTree(t)
	if err := os.Symlink("sub", filepath.Join(dir, "ws/inlink")); err != nil {
		t.Fatal(err)
	}
	r := CaptureRequest{Approved: true, Executable: filepath.Join(dir, "bin/X11/X11/tool"),
		WorkingDir: filepath.Join(dir, "ws/inlink"), FilesystemRoots: []string{filepath.Join(dir, "ws/inlink/new/dir")}}
	got, reason, msg := s.ResolveCapture(r)
	if reason != "" {
		t.Fatalf("refused: %s (%s)", reason, msg)
	}
	want := CaptureRequest{Approved: true, Executable: filepath.Join(dir, "bin/tool"), WorkingDir: filepath.Join(dir, "ws/sub"),
		FilesystemRoots: []string{filepath.Join(dir, "ws/sub/new/dir")}}
	if got.Executable != want.Executable || got.WorkingDir != want.WorkingDir || got.FilesystemRoots[0] != want.FilesystemRoots[0] {
		t.Fatalf("resolved = %+v, want %+v", got, want)
	}
	// A root given through a symlink contains what its target contains.
	s.ExecutableRoots = []string{filepath.Join(dir, "bin/X11")}
	if _, reason, msg := s.ResolveCapture(r); reason != "" {
		t.Fatalf("root through a link refused: %s (%s)", reason, msg)
	}
}

// TestCaptureDebianX11 is the case from the report, on the real /usr/bin
// where Debian ships /usr/bin/X11 -> . (skipped elsewhere).
func TestCaptureDebianX11(t *testing.T) {
	if l, err := os.Readlink("/usr/bin/X11"); err != nil || l != "." {
		t.Skip("no /usr/bin/X11 -> . here")
	}
	tmp := t.TempDir()
	evil := filepath.Join(tmp, "evil.sh")
	if err := os.WriteFile(evil, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	up := "/usr/bin/X11/X11/../.."
	s := CaptureSettings{Enabled: true, ExecutableRoots: []string{"/usr/bin"}, WorkingRoots: []string{tmp}}
	r := CaptureRequest{Approved: true, Executable: up + evil, WorkingDir: tmp}
	if _, reason, _ := s.ResolveCapture(r); reason != ReasonUncleanPath {
		t.Fatalf("reason = %q, want %q", reason, ReasonUncleanPath)
	}
	r.Executable = "/usr/bin/X11/id"
	got, reason, msg := s.ResolveCapture(r)
	if reason != "" || got.Executable != "/usr/bin/id" {
		t.Fatalf("/usr/bin/X11/id: %q %s -> %q", reason, msg, got.Executable)
	}
}

func TestResolvePathErrors(t *testing.T) {
	dir, _ := symlinkTree(t)
	if err := os.Symlink("nowhere", filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"", "rel", "/a/../b", "/a\x00b", filepath.Join(dir, "dangling/x"), filepath.Join(dir, "bin/tool/x")} {
		if got, err := ResolvePath(p); err == nil {
			t.Errorf("ResolvePath(%q) = %q, want an error", p, got)
		}
	}
	if got, err := ResolvePath("/"); err != nil || got != "/" {
		t.Fatalf("ResolvePath(/) = %q, %v", got, err)
	}
}

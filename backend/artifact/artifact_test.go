package artifact

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/gatehouse/gatehouse/internal/testfs"
)

// writeBundle creates a bundle folder holding files (relative path → bytes)
// plus SKILL.md and execution.json when they are not given.
func writeBundle(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{SkillFile: "---\nname: x\ndescription: d\n---\n", ManifestFile: "{}"}
	for k, v := range files {
		all[k] = v
	}
	testfs.WriteTree(t, dir, all)
	return dir
}

func mustCapture(t *testing.T, dir string, declared ...string) *Snapshot {
	t.Helper()
	s, err := Capture(dir, declared)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != code {
		t.Fatalf("err = %v, want code %s", err, code)
	}
}

func TestRevisionIsPathIndependentAndByteExact(t *testing.T) {
	files := map[string]string{"scripts/run.mjs": "console.log(1)\n", "scripts/lib.mjs": "export {}\n"}
	a := mustCapture(t, writeBundle(t, files), "scripts/run.mjs", "scripts/lib.mjs")
	b := mustCapture(t, writeBundle(t, files), "scripts/lib.mjs", "scripts/run.mjs")
	if a.Revision() != b.Revision() || !strings.HasPrefix(a.Revision(), "sha256:") || len(a.Revision()) != 71 {
		t.Fatalf("same bytes, different folders/order: %s vs %s", a.Revision(), b.Revision())
	}
	variants := map[string]func() *Snapshot{
		"one byte changed": func() *Snapshot {
			return mustCapture(t, writeBundle(t, map[string]string{"scripts/run.mjs": "console.log(2)\n", "scripts/lib.mjs": "export {}\n"}), "scripts/run.mjs", "scripts/lib.mjs")
		},
		"path renamed": func() *Snapshot {
			return mustCapture(t, writeBundle(t, map[string]string{"scripts/run.mjs": "console.log(1)\n", "scripts/lib2.mjs": "export {}\n"}), "scripts/run.mjs", "scripts/lib2.mjs")
		},
		"file removed from set": func() *Snapshot {
			return mustCapture(t, writeBundle(t, files), "scripts/run.mjs")
		},
		"file added to set": func() *Snapshot {
			f := map[string]string{"assets/a.json": "{}"}
			for k, v := range files {
				f[k] = v
			}
			return mustCapture(t, writeBundle(t, f), "scripts/run.mjs", "scripts/lib.mjs", "assets/a.json")
		},
		"bytes moved between files": func() *Snapshot {
			return mustCapture(t, writeBundle(t, map[string]string{"scripts/run.mjs": "console.log(1)\nexport {}\n", "scripts/lib.mjs": ""}), "scripts/run.mjs", "scripts/lib.mjs")
		},
	}
	for name, mk := range variants {
		if r := mk().Revision(); r == a.Revision() {
			t.Errorf("%s: revision unchanged", name)
		}
	}
}

func TestSnapshotIsACopy(t *testing.T) {
	dir := writeBundle(t, map[string]string{"a.mjs": "A"})
	s := mustCapture(t, dir, "a.mjs")
	b, _ := s.Bytes("a.mjs")
	b[0] = 'Z'
	if again, _ := s.Bytes("a.mjs"); string(again) != "A" {
		t.Fatal("Bytes exposed the snapshot's storage")
	}
	os.WriteFile(filepath.Join(dir, "a.mjs"), []byte("changed"), 0o644)
	if again, _ := s.Bytes("a.mjs"); string(again) != "A" {
		t.Fatal("snapshot follows the source folder")
	}
	if _, ok := s.Bytes("missing"); ok {
		t.Fatal("Bytes of a missing path")
	}
	if got := strings.Join(s.Paths(), ","); got != "SKILL.md,a.mjs,execution.json" {
		t.Fatalf("Paths = %s", got)
	}
}

func TestCaptureRefusesUnsafeFiles(t *testing.T) {
	t.Run("symlinked file", func(t *testing.T) {
		dir := writeBundle(t, map[string]string{"real.mjs": "x"})
		os.Symlink("real.mjs", filepath.Join(dir, "link.mjs"))
		_, err := Capture(dir, []string{"link.mjs"})
		wantCode(t, err, "symlink_or_not_directory")
	})
	t.Run("symlinked directory", func(t *testing.T) {
		dir := writeBundle(t, map[string]string{"real/a.mjs": "x"})
		os.Symlink("real", filepath.Join(dir, "scripts"))
		_, err := Capture(dir, []string{"scripts/a.mjs"})
		wantCode(t, err, "symlink_or_not_directory")
	})
	t.Run("symlinked SKILL.md", func(t *testing.T) {
		dir := writeBundle(t, nil)
		os.Remove(filepath.Join(dir, SkillFile))
		os.Symlink("/etc/hostname", filepath.Join(dir, SkillFile))
		_, err := Capture(dir, nil)
		wantCode(t, err, "symlink_or_not_directory")
	})
	t.Run("symlinked bundle root", func(t *testing.T) {
		dir := writeBundle(t, nil)
		link := filepath.Join(t.TempDir(), "b")
		os.Symlink(dir, link)
		_, err := Capture(link, nil)
		wantCode(t, err, "open_bundle")
	})
	t.Run("fifo", func(t *testing.T) {
		dir := writeBundle(t, nil)
		if err := syscall.Mkfifo(filepath.Join(dir, "p.mjs"), 0o644); err != nil {
			t.Skip(err)
		}
		_, err := Capture(dir, []string{"p.mjs"})
		wantCode(t, err, "not_regular")
	})
	t.Run("directory", func(t *testing.T) {
		dir := writeBundle(t, map[string]string{"d/x": ""})
		_, err := Capture(dir, []string{"d"})
		wantCode(t, err, "not_regular")
	})
	for _, c := range []struct{ path, code string }{
		{"/etc/passwd", "absolute_path"}, {"../x.mjs", "parent_traversal"}, {"a/../../x", "parent_traversal"},
		{"a//b", "invalid_path"}, {"./a", "invalid_path"}, {`a\b`, "invalid_path"}, {"", "invalid_path"},
		{"missing.mjs", "missing"}, {SkillFile, "duplicate_path"},
	} {
		t.Run("path "+c.path, func(t *testing.T) {
			_, err := Capture(writeBundle(t, nil), []string{c.path})
			wantCode(t, err, c.code)
		})
	}
	t.Run("duplicate declared", func(t *testing.T) {
		_, err := Capture(writeBundle(t, map[string]string{"a": ""}), []string{"a", "a"})
		wantCode(t, err, "duplicate_path")
	})
}

func TestCaptureBoundsAtTheLimit(t *testing.T) {
	t.Run("file size", func(t *testing.T) {
		dir := writeBundle(t, map[string]string{"at": strings.Repeat("a", MaxFileBytes), "over": strings.Repeat("a", MaxFileBytes+1)})
		mustCapture(t, dir, "at")
		_, err := Capture(dir, []string{"over"})
		wantCode(t, err, "file_too_large")
	})
	t.Run("file count", func(t *testing.T) {
		files := map[string]string{}
		var names []string
		for i := 0; i < MaxDeclaredFiles+1; i++ {
			n := fmt.Sprintf("f%02d", i)
			files[n] = n
			names = append(names, n)
		}
		dir := writeBundle(t, files)
		mustCapture(t, dir, names[:MaxDeclaredFiles]...)
		_, err := Capture(dir, names)
		wantCode(t, err, "too_many_files")
	})
	t.Run("total bytes", func(t *testing.T) {
		// Fill the budget exactly: metadata of four files plus the two
		// automatic files, three 1 MiB files and a remainder.
		skill, manifest := "---\nname: x\ndescription: d\n---\n", "{}"
		names := []string{"a", "b", "c", "d"}
		used := metadataCost(SkillFile) + len(skill) + metadataCost(ManifestFile) + len(manifest)
		for _, n := range names {
			used += metadataCost(n)
		}
		rest := MaxSnapshotBytes - used
		files := map[string]string{}
		for i, n := range names {
			size := MaxFileBytes
			if i == len(names)-1 {
				size = rest - (len(names)-1)*MaxFileBytes
			}
			files[n] = strings.Repeat("x", size)
		}
		dir := writeBundle(t, files)
		s := mustCapture(t, dir, names...)
		if s.TotalBytes() != MaxSnapshotBytes {
			t.Fatalf("total %d, want exactly %d", s.TotalBytes(), MaxSnapshotBytes)
		}
		os.WriteFile(filepath.Join(dir, "d"), []byte(files["d"]+"x"), 0o644)
		_, err := Capture(dir, names)
		wantCode(t, err, "snapshot_too_large")
	})
}

// A file whose length differs from what fstat promised (as /proc files do)
// is a file that changed while it was read.
func TestCaptureDetectsChangeDuringRead(t *testing.T) {
	_, err := capturePaths(fmt.Sprintf("/proc/%d", os.Getpid()), []string{"status"})
	wantCode(t, err, "changed_during_capture")
}

// While a writer keeps rewriting a file between an all-A and an all-B
// version, every capture either fails as changed or yields a state the file
// really had (os.WriteFile truncates first, so a short prefix is such a
// state) — never bytes of both versions.
func TestCaptureNeverMixesVersions(t *testing.T) {
	a, b := strings.Repeat("A", 256<<10), strings.Repeat("B", 256<<10)
	dir := writeBundle(t, map[string]string{"f": a})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			data := a
			if i%2 == 1 {
				data = b
			}
			os.WriteFile(filepath.Join(dir, "f"), []byte(data), 0o644)
		}
	}()
	for i := 0; i < 200; i++ {
		s, err := Capture(dir, []string{"f"})
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) || (ae.Code != "changed_during_capture" && ae.Code != "missing") {
				t.Errorf("unexpected error %v", err)
			}
			continue
		}
		got, _ := s.Bytes("f")
		if bytes.ContainsRune(got, 'A') && bytes.ContainsRune(got, 'B') {
			t.Fatalf("capture %d mixed the two versions", i)
		}
	}
	close(stop)
	wg.Wait()
}

func TestStageWritesPrivateReadOnlyCopyAndVerifies(t *testing.T) {
	src := writeBundle(t, map[string]string{"scripts/run.mjs": "console.log(1)", "assets/a.json": "{}"})
	snap := mustCapture(t, src, "scripts/run.mjs", "assets/a.json")
	os.RemoveAll(src) // the source may vanish after capture
	st, err := Stage(snap, filepath.Join(t.TempDir(), "bundle"))
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(st.Dir()); fi.Mode().Perm() != 0o500 {
		t.Fatalf("staging dir mode %v", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Join(st.Dir(), "scripts", "run.mjs")); fi.Mode().Perm() != 0o400 {
		t.Fatalf("staged file mode %v", fi.Mode().Perm())
	}
	got, _ := os.ReadFile(filepath.Join(st.Dir(), "scripts", "run.mjs"))
	if string(got) != "console.log(1)" {
		t.Fatalf("staged bytes %q", got)
	}

	target := filepath.Join(st.Dir(), "scripts", "run.mjs")
	if err := os.WriteFile(filepath.Join(st.Dir(), "scripts", "new.mjs"), nil, 0o600); err == nil && os.Geteuid() != 0 {
		t.Fatal("a sealed staging directory accepted a new file")
	}
	os.Remove(filepath.Join(st.Dir(), "scripts", "new.mjs"))
	os.Chmod(target, 0o600)
	os.WriteFile(target, []byte("console.log(2)"), 0o600)
	os.Chmod(target, 0o400)
	wantCode(t, st.Verify(), "revision_mismatch")
	os.Chmod(target, 0o600)
	os.WriteFile(target, []byte("console.log(1)"), 0o600)
	wantCode(t, st.Verify(), "staging_tampered") // mode is now wrong
	os.Chmod(target, 0o400)
	if err := st.Verify(); err != nil {
		t.Fatalf("restored staging fails: %v", err)
	}
	os.Chmod(st.Dir(), 0o700)
	wantCode(t, st.Verify(), "staging_tampered") // directory no longer sealed
	os.WriteFile(filepath.Join(st.Dir(), "extra.mjs"), nil, 0o400)
	os.Chmod(st.Dir(), 0o500)
	wantCode(t, st.Verify(), "staging_tampered")
	os.Chmod(st.Dir(), 0o700)
	os.Remove(filepath.Join(st.Dir(), "extra.mjs"))
	os.Chmod(st.Dir(), 0o500)
	if err := st.Verify(); err != nil {
		t.Fatalf("restored staging fails: %v", err)
	}
	os.Chmod(filepath.Join(st.Dir(), "assets"), 0o700)
	os.Symlink("/etc/passwd", filepath.Join(st.Dir(), "assets", "link"))
	os.Chmod(filepath.Join(st.Dir(), "assets"), 0o500)
	wantCode(t, st.Verify(), "staging_tampered")

	if err := st.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(st.Dir()); !os.IsNotExist(err) {
		t.Fatal("staging not removed")
	}
}

func TestSweepLeftoversDeletesWithoutRunning(t *testing.T) {
	runs := t.TempDir()
	snap := mustCapture(t, writeBundle(t, map[string]string{"run.sh": "touch ran"}), "run.sh")
	st1, _ := Stage(snap, filepath.Join(runs, "dead-1"))
	st2, _ := Stage(snap, filepath.Join(runs, "dead-2"))
	live, _ := Stage(snap, filepath.Join(runs, "live-1"))
	if _, err := Stage(snap, live.Dir()); err == nil {
		t.Fatal("staged into a non-empty directory")
	}
	open := filepath.Join(runs, "open")
	os.Mkdir(open, 0o755)
	if _, err := Stage(snap, open); err == nil {
		t.Fatal("staged into a directory open to others")
	}
	prepared := filepath.Join(runs, "live-prepared")
	os.Mkdir(prepared, 0o700)
	if _, err := Stage(snap, prepared); err != nil {
		t.Fatalf("prepared empty private directory: %v", err)
	}
	removed, err := SweepLeftovers(runs, func(name string) bool { return strings.HasPrefix(name, "dead-") })
	if err != nil || len(removed) != 2 {
		t.Fatalf("removed %v, %v", removed, err)
	}
	for _, d := range []string{st1.Dir(), st2.Dir()} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s survived the sweep", d)
		}
	}
	if err := live.Verify(); err != nil {
		t.Fatalf("a live staging was touched: %v", err)
	}
	if removed, err := SweepLeftovers(filepath.Join(t.TempDir(), "none"), func(string) bool { return true }); err != nil || removed != nil {
		t.Fatalf("missing runs dir: %v %v", removed, err)
	}
}

// benchBundle writes a 64-file bundle of about 4 MiB.
func benchBundle(b *testing.B) (string, []string) {
	files := map[string]string{}
	var names []string
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4000) // 64,000 bytes
	for i := 0; i < 62; i++ {
		n := fmt.Sprintf("scripts/part%02d.mjs", i)
		files[n] = string(chunk)
		names = append(names, n)
	}
	return writeBundle(b, files), names
}

// BenchmarkCapture measures capture + revision of a 64-file, ~4 MiB bundle
// (62 declared files plus SKILL.md and execution.json).
func BenchmarkCapture(b *testing.B) {
	dir, names := benchBundle(b)
	b.SetBytes(62 * 64000)
	for i := 0; i < b.N; i++ {
		if _, err := Capture(dir, names); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSha256sum is the baseline: the sha256sum command over the same
// 64 files.
func BenchmarkSha256sum(b *testing.B) {
	dir, names := benchBundle(b)
	args := append([]string{SkillFile, ManifestFile}, names...)
	b.SetBytes(62 * 64000)
	for i := 0; i < b.N; i++ {
		cmd := exec.Command("sha256sum", args...)
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

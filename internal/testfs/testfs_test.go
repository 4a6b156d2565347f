package testfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteTree(t *testing.T) {
	dir := t.TempDir()
	WriteTree(t, dir, map[string]string{"a.txt": "A", "deep/er/b.txt": "B"})
	for name, want := range map[string]string{"a.txt": "A", "deep/er/b.txt": "B"} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != want {
			t.Errorf("%s: %q %v", name, got, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "deep", "er", "b.txt")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode: %v %v", fi, err)
	}
}

// Package testfs writes the small file trees tests build their inputs
// from (skill bundles, working directories). It is used only by tests
// (app, backend/artifact, backend/approvals); it holds no state.
package testfs

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteTree writes files (slash-separated names relative to dir, each
// with its parent directories, mode 0644 below 0755 folders) below dir; a
// failed write ends the test.
func WriteTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideCitation matches a citation of a document that lives outside the
// repository: the product spec files (NN-name.md), the folder they live in,
// and the seed documents. The contract the code cites is docs/formats/ and
// the rest of docs/. (The expression is written so that its own source text
// does not match it.)
var outsideCitation = regexp.MustCompile(`\b[0-9]{2}-(product|skills|policy-consent|runner|capture|compare-replay|ui|mcp|quality)\.md\b|\.\./shared\b|\bshared/(spec|seeds|notes)\b|\bseeds/[0-9]{3}_`)

// citationExts are the files people and tools read: code, documentation,
// build files, configuration.
var citationExts = map[string]bool{
	".go": true, ".ts": true, ".js": true, ".mjs": true, ".cjs": true, ".md": true,
	".json": true, ".yml": true, ".yaml": true, ".sh": true, ".html": true, ".css": true,
	".txt": true, ".desktop": true, ".toml": true,
}

// TestNoCitationOutsideRepository fails when any source, documentation or
// build file of the repository cites a spec or seed file that is not in the
// repository (a product spec file such as NN-capture.md, or a seed). Comments, error messages and
// remediation texts cite docs/formats/… instead.
func TestNoCitationOutsideRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the repository root %s has no go.mod: %v", root, err)
	}
	scanned := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			switch name {
			case ".git", "node_modules", "dist", "bin", "test-results", "playwright-report":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !(citationExts[filepath.Ext(name)] || name == "Makefile") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		scanned++
		rel, _ := filepath.Rel(root, path)
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for line := 1; sc.Scan(); line++ {
			if m := outsideCitation.FindString(sc.Text()); m != "" {
				t.Errorf("%s:%d cites %q, which is not in the repository; cite the docs/formats/ (or docs/) page that holds the fact: %s",
					rel, line, m, strings.TrimSpace(sc.Text()))
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if scanned < 100 {
		t.Fatalf("scanned only %d files under %s; the walk is not seeing the repository", scanned, root)
	}
}

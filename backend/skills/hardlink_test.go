package skills

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/backend/artifact"
)

// TestReadResourceRefusesOutsideHardLinks is the attacker's side: a bundle
// whose references/notes.md is a hard link to a private file outside the
// bundle must not hand that file to read_skill_resource; links whose every
// name is inside the bundle stay readable.
func TestReadResourceRefusesOutsideHardLinks(t *testing.T) {
	base := t.TempDir()
	secret := filepath.Join(base, "id_ed25519")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "root", "linker")
	os.MkdirAll(filepath.Join(dir, "references"), 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: linker\ndescription: d\n---\n"), 0o644)
	if err := os.Link(secret, filepath.Join(dir, "references", "notes.md")); err != nil {
		t.Skipf("hard links unsupported here: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "references", "a.md"), []byte("shared"), 0o644)
	if err := os.Link(filepath.Join(dir, "references", "a.md"), filepath.Join(dir, "references", "b.md")); err != nil {
		t.Fatal(err)
	}
	s := &Skill{Name: "linker", Kind: KindFolder, Dir: dir}

	data, err := ReadResource(s, "references/notes.md", 1<<20)
	var ae *artifact.Error
	if !errors.As(err, &ae) || ae.Code != "hard_link" || data != nil {
		t.Fatalf("outside hard link: %q, %v; want a hard_link refusal", data, err)
	}
	for _, p := range []string{"references/a.md", "references/b.md"} {
		if data, err := ReadResource(s, p, 1<<20); err != nil || string(data) != "shared" {
			t.Fatalf("%s (both names in the bundle): %q, %v", p, data, err)
		}
	}
	if data, err := ReadResource(s, "SKILL.md", 1<<20); err != nil || len(data) == 0 {
		t.Fatalf("plain file: %v", err)
	}
}

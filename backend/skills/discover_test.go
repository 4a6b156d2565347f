package skills

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gatehouse/gatehouse/backend/bundle"
)

func testRoots(t *testing.T) (a, b Root) {
	t.Helper()
	pa, _ := filepath.Abs("testdata/root-a")
	pb, _ := filepath.Abs("testdata/root-b")
	return Root{Path: pa, Origin: "bundled"}, Root{Path: pb, Origin: "settings"}
}

func TestDiscoverPrecedenceAndListing(t *testing.T) {
	a, b := testRoots(t)
	cat := Discover([]Root{a, b})
	var names []string
	for _, s := range cat.Skills {
		names = append(names, s.Name)
	}
	want := "alpha,bad-manifest,beta,broken-yaml,flat-one,lonely-flat,no-description,with-folder"
	if strings.Join(names, ",") != want {
		t.Fatalf("skills %v, want %s", names, want)
	}
	alpha, _ := cat.Find("alpha")
	if alpha.Root != b || alpha.Frontmatter.Description != "Alpha from root B wins." || len(alpha.Shadowed) != 1 || alpha.Shadowed[0].Root != a {
		t.Fatalf("later root must win: %+v", alpha)
	}
	// Reversed order: root A wins.
	rev := Discover([]Root{b, a})
	if alpha, _ := rev.Find("alpha"); alpha.Root != a {
		t.Fatal("precedence does not follow root order")
	}
	beta, _ := cat.Find("beta")
	if beta.Kind != KindFolder || len(beta.Shadowed) != 1 || beta.Shadowed[0].Kind != KindFlat {
		t.Fatalf("folder must beat a flat file in one root: %+v", beta)
	}
	if len(cat.Roots) != 2 || cat.Roots[0].Skills != 8 || cat.Roots[1].Skills != 1 {
		t.Fatalf("roots %+v", cat.Roots)
	}
}

func TestInvalidSkillsAreListedNotHidden(t *testing.T) {
	a, _ := testRoots(t)
	cat := Discover([]Root{a})
	for name, code := range map[string]string{"broken-yaml": "invalid_yaml", "no-description": "missing_description"} {
		s, ok := cat.Find(name)
		if !ok || s.Valid || s.Errors[0].Code != code {
			t.Fatalf("%s: %+v", name, s)
		}
		if ex := bundle.Inspect(s.Dir, bundle.InspectOptions{}); ex.Available {
			t.Fatalf("%s: invalid skill available", name)
		}
	}
	bad, ok := cat.Find("bad-manifest")
	if !ok || !bad.Valid || !bad.HasManifest {
		t.Fatalf("an invalid execution.json must not hide the skill: %+v", bad)
	}
	ex := bundle.Inspect(bad.Dir, bundle.InspectOptions{Runtime: func() error { return nil }})
	if ex.Available || len(ex.Issues) == 0 {
		t.Fatalf("bad manifest inspection: %+v", ex)
	}
}

func TestFlatSkillNeverPicksUpNeighbourManifest(t *testing.T) {
	a, _ := testRoots(t)
	cat := Discover([]Root{a})
	s, ok := cat.Find("lonely-flat")
	if !ok || s.Kind != KindFlat || s.Dir != "" || s.HasManifest {
		t.Fatalf("flat skill %+v", s)
	}
	if !hasCode(s.Warnings, "legacy_flat_skill") {
		t.Fatalf("warnings %v", s.Warnings)
	}
	ex := bundle.Inspect(s.Dir, bundle.InspectOptions{Runtime: func() error { return nil }})
	if ex.Available || ex.Reason != bundle.ReasonFlat || ex.Manifest != nil {
		t.Fatalf("flat inspection %+v", ex)
	}
	if res, _ := Resources(s); len(res) != 0 {
		t.Fatalf("flat skill has resources %v", res)
	}
	if _, err := ReadResource(s, "scripts/run.mjs", 1024); err == nil {
		t.Fatal("flat skill read a neighbour's file")
	}
}

func hasCode(is []bundle.Issue, code string) bool {
	for _, i := range is {
		if i.Code == code {
			return true
		}
	}
	return false
}

func TestRootErrorsAreReported(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	cat := Discover([]Root{{Path: "relative/root"}, {Path: "/no/such/root"}, {Path: file}})
	for i, r := range cat.Roots {
		if r.Error == "" {
			t.Errorf("root %d: no error", i)
		}
	}
	if len(cat.Skills) != 0 {
		t.Fatal("skills from broken roots")
	}
}

func TestSymlinkedSkillIsListedInvalid(t *testing.T) {
	a, _ := testRoots(t)
	root := t.TempDir()
	os.Symlink(filepath.Join(a.Path, "alpha"), filepath.Join(root, "alpha"))
	os.Symlink(filepath.Join(a.Path, "flat-one.md"), filepath.Join(root, "flat-one.md"))
	cat := Discover([]Root{{Path: root, Origin: "settings"}})
	for _, n := range []string{"alpha", "flat-one"} {
		s, ok := cat.Find(n)
		if !ok || s.Valid || s.Errors[0].Code != "symlink" {
			t.Fatalf("%s: %+v", n, s)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(root, link)
	if cat := Discover([]Root{{Path: link}}); cat.Roots[0].Error == "" {
		t.Fatal("symlinked root followed")
	}
}

func TestResourcesAndSafeReads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "res")
	os.MkdirAll(filepath.Join(dir, "references"), 0o755)
	os.MkdirAll(filepath.Join(dir, "assets"), 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: res\ndescription: d\n---\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "references", "REF.md"), []byte("ref"), 0o644)
	os.WriteFile(filepath.Join(dir, "assets", "a.json"), []byte("{}"), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "assets", "passwd"))
	syscall.Mkfifo(filepath.Join(dir, "assets", "pipe"), 0o644)
	s, err := LoadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, issues := Resources(s)
	var paths []string
	for _, r := range res {
		paths = append(paths, r.Kind+":"+r.Path)
	}
	if strings.Join(paths, ",") != "instructions:SKILL.md,asset:assets/a.json,reference:references/REF.md" {
		t.Fatalf("resources %v", paths)
	}
	if !hasCode(issues, "symlink") || !hasCode(issues, "special_file") {
		t.Fatalf("symlink and fifo must be reported, got %v", issues)
	}
	// Resolution is relative to the skill folder whatever the working directory.
	t.Chdir(t.TempDir())
	if b, err := ReadResource(s, "references/REF.md", 100); err != nil || string(b) != "ref" {
		t.Fatalf("read: %q %v", b, err)
	}
	for _, bad := range []string{"/etc/passwd", "../res/SKILL.md", "assets/passwd", "assets/pipe", "assets", "missing"} {
		if _, err := ReadResource(s, bad, 100); err == nil {
			t.Errorf("ReadResource(%q) succeeded", bad)
		}
	}
	if _, err := ReadResource(s, "references/REF.md", 2); err == nil {
		t.Error("oversize resource read")
	}
}

// Discovery, inspection and resource listing must never execute anything:
// a bundle whose script and frontmatter hooks would drop a marker leaves
// no marker behind.
func TestDiscoveryExecutesNothing(t *testing.T) {
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	dir := filepath.Join(root, "trap")
	os.MkdirAll(filepath.Join(dir, "scripts"), 0o755)
	os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: trap\ndescription: d\nhooks:\n  SessionStart: touch "+marker+"\n---\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripts", "run.mjs"), []byte("import fs from 'node:fs'; fs.writeFileSync('"+marker+"', 'x')\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "execution.json"), []byte(`{"schemaVersion":1,"entrypoint":"scripts/run.mjs","files":["scripts/run.mjs"],"inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"null"},"timeoutMs":1000,"maxOutputBytes":10}`), 0o644)
	cat := Discover([]Root{{Path: root}})
	s, _ := cat.Find("trap")
	Resources(s)
	ex := bundle.Inspect(s.Dir, bundle.InspectOptions{Runtime: func() error { return nil }})
	if !ex.Available {
		t.Fatalf("fixture should be available: %v", ex.Issues)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("discovery or inspection executed bundle code")
	}
	if len(s.UnknownFields) != 1 || s.UnknownFields[0].Key != "hooks" {
		t.Fatalf("hooks must be preserved, not acted on: %+v", s.UnknownFields)
	}
}

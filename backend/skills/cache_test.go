package skills

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A cached discovery gives exactly the answer of an uncached one, on the
// testdata roots (valid, broken, flat and shadowed skills), the first time
// and from the cache.
func TestDiscoverCachedIsDiscover(t *testing.T) {
	a, b := testRoots(t)
	want, _ := json.Marshal(Discover([]Root{a, b}))
	var cache DocumentCache
	for i := 0; i < 2; i++ {
		got, _ := json.Marshal(DiscoverCached([]Root{a, b}, &cache))
		if string(got) != string(want) {
			t.Fatalf("pass %d: cached discovery differs:\n%s\nwant\n%s", i, got, want)
		}
	}
}

// A changed SKILL.md is parsed again at the next discovery (a fixed
// description, then broken YAML), and a caller changing what it got does
// not change what the cache gives the next caller.
func TestDocumentCacheSeesChangesAndIsolatesCallers(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "demo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(doc string) {
		if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var cache DocumentCache
	find := func() *Skill {
		s, ok := DiscoverCached([]Root{{Path: root, Origin: "settings"}}, &cache).Find("demo")
		if !ok {
			t.Fatal("demo not found")
		}
		return s
	}
	write("---\nname: demo\ndescription: First.\nmetadata:\n  k: v\n---\nbody\n")
	s := find()
	if !s.Valid || s.Frontmatter.Description != "First." {
		t.Fatalf("first parse: %+v", s)
	}
	s.Frontmatter.Metadata["k"] = "changed"
	s.Warnings = append(s.Warnings, s.Warnings...)
	if again := find(); again.Frontmatter.Metadata["k"] != "v" {
		t.Fatalf("a caller's change reached the cache: %+v", again.Frontmatter.Metadata)
	}
	write("---\nname: demo\ndescription: Second.\n---\nbody\n")
	if s := find(); s.Frontmatter.Description != "Second." {
		t.Fatalf("changed description not seen: %q", s.Frontmatter.Description)
	}
	write("---\nname: demo\ndescription: [unclosed\n---\nbody\n")
	if s := find(); s.Valid || s.Errors[0].Code != "invalid_yaml" {
		t.Fatalf("broken YAML not seen: %+v", s.Errors)
	}
}

// The cache is bounded by the bytes of the documents it keeps, not only
// by their number: 48 documents of 1 MiB keep at most 32 MiB.
func TestDocumentCacheByteBound(t *testing.T) {
	var cache DocumentCache
	body := strings.Repeat("x", MaxSkillFileBytes-100)
	for i := 0; i < 48; i++ {
		doc := fmt.Sprintf("---\nname: demo\ndescription: Number %d.\n---\n%s", i, body)
		if p := cache.parse([]byte(doc), "demo"); p.fm.Description != fmt.Sprintf("Number %d.", i) {
			t.Fatalf("document %d parsed as %q", i, p.fm.Description)
		}
		if b := cache.entries().Bytes(); b > maxCachedDocumentBytes {
			t.Fatalf("after %d documents the cache keeps %d bytes", i+1, b)
		}
	}
	if n := cache.entries().Len(); n >= 48 {
		t.Fatalf("%d entries kept", n)
	}
}

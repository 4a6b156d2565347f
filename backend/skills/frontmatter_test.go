package skills

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/bundle"
)

func doc(fm string) []byte { return []byte("---\n" + fm + "---\n# Body\n") }

func codes(is []bundle.Issue) string {
	var c []string
	for _, i := range is {
		c = append(c, i.Code)
	}
	return strings.Join(c, ",")
}

func TestFrontmatterValidFull(t *testing.T) {
	p := parseDocument(doc(`name: my-skill
description: Does a thing.
license: MIT
compatibility: Node 20+
metadata:
  version: "1.0"
  author: someone
allowed-tools: Read Bash(git:*)
`), "my-skill")
	if len(p.errors)+len(p.warnings) > 0 {
		t.Fatalf("errors %v warnings %v", p.errors, p.warnings)
	}
	fm := p.fm
	if fm.Name != "my-skill" || fm.Description != "Does a thing." || fm.License != "MIT" || fm.Compatibility != "Node 20+" ||
		fm.Metadata["version"] != "1.0" || strings.Join(fm.AllowedTools, "|") != "Read|Bash(git:*)" || p.body != "# Body\n" {
		t.Fatalf("parsed %+v body %q", fm, p.body)
	}
}

func TestFrontmatterLimitsAtAndPast(t *testing.T) {
	name64 := strings.Repeat("a", 64)
	for _, c := range []struct {
		fm, folder, errs, warns string
	}{
		{"name: " + name64 + "\ndescription: d\n", name64, "", ""},
		{"name: " + name64 + "a\ndescription: d\n", name64 + "a", "", "name_too_long"},
		{"name: x\ndescription: " + strings.Repeat("d", 1024) + "\n", "x", "", ""},
		{"name: x\ndescription: " + strings.Repeat("d", 1025) + "\n", "x", "", "description_too_long"},
		{"name: x\ndescription: " + strings.Repeat("é", 1024) + "\n", "x", "", ""}, // characters, not bytes
		{"name: x\ndescription: d\ncompatibility: " + strings.Repeat("c", 500) + "\n", "x", "", ""},
		{"name: x\ndescription: d\ncompatibility: " + strings.Repeat("c", 501) + "\n", "x", "", "compatibility_too_long"},
		{"name: Bad_Name\ndescription: d\n", "Bad_Name", "", "invalid_name"},
		{"name: -a\ndescription: d\n", "-a", "", "invalid_name"},
		{"name: a-\ndescription: d\n", "a-", "", "invalid_name"},
		{"name: a--b\ndescription: d\n", "a--b", "", "invalid_name"},
		{"name: a-b-9\ndescription: d\n", "a-b-9", "", ""},
		{"name: other\ndescription: d\n", "x", "", "name_mismatch"},
		{"description: d\n", "x", "", "missing_name"},
		{"name: x\n", "x", "missing_description", ""},
		{"name: x\ndescription: \"\"\n", "x", "missing_description", ""},
		{"name: x\ndescription: '   '\n", "x", "missing_description", ""},
		{"name: x\ndescription: [a]\n", "x", "invalid_description", ""},
		{"name: x\ndescription: d\nmetadata: [1]\n", "x", "", "invalid_metadata"},
		{"name: x\ndescription: d\nmetadata:\n  version: 1.0\n", "x", "", "invalid_metadata"},
		{"name: x\ndescription: d\nallowed-tools: [Read]\n", "x", "", "invalid_allowed_tools"},
		{"name: x\ndescription: d\nlicense: [MIT]\n", "x", "", "wrong_type"},
		{"name: [x]\ndescription: d\n", "x", "", "wrong_type,missing_name"},
	} {
		p := parseDocument(doc(c.fm), c.folder)
		if codes(p.errors) != c.errs || codes(p.warnings) != c.warns {
			t.Errorf("%.60q: errors %q warnings %q, want %q %q", c.fm, codes(p.errors), codes(p.warnings), c.errs, c.warns)
		}
	}
}

func TestFrontmatterUnparseable(t *testing.T) {
	for _, c := range []struct{ doc, code string }{
		{"# no frontmatter\n", "missing_frontmatter"},
		{"---\nname: x\ndescription: d\n", "missing_frontmatter"}, // never closed
		{"---\nname: [x\n---\n", "invalid_yaml"},
		{"---\n- a\n- b\n---\n", "frontmatter_not_mapping"},
		{"---\n---\n", "frontmatter_not_mapping"},
		{"---\nname: x\nname: y\ndescription: d\n---\n", "duplicate_key"},
		{"---\nname: x\ndescription: \"\xff\"\n---\n", "invalid_utf8"},
	} {
		p := parseDocument([]byte(c.doc), "x")
		if len(p.errors) != 1 || p.errors[0].Code != c.code {
			t.Errorf("%q: %v, want %s", c.doc, p.errors, c.code)
		}
	}
}

func TestFrontmatterCRLFAndBOM(t *testing.T) {
	p := parseDocument([]byte("\xef\xbb\xbf---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n"), "x")
	if len(p.errors) > 0 || p.fm.Description != "d" {
		t.Fatalf("%v %+v", p.errors, p.fm)
	}
}

func TestUnknownFieldsPreservedByteForByte(t *testing.T) {
	hooks := "hooks:\n  PreToolUse:\n    - matcher: \"Bash\"   # keep this comment\n      run: ./x.sh\n"
	fm := "name: x\ndisable-model-invocation: true\ndescription: d\n" + hooks + "context:   fork\n"
	p := parseDocument(doc(fm), "x")
	if len(p.errors) > 0 {
		t.Fatal(p.errors)
	}
	want := []UnknownField{
		{Key: "disable-model-invocation", Raw: "disable-model-invocation: true\n", Note: NotEnforced},
		{Key: "hooks", Raw: hooks, Note: NotEnforced},
		{Key: "context", Raw: "context:   fork\n", Note: NotEnforced},
	}
	if len(p.unknown) != len(want) {
		t.Fatalf("unknown %+v", p.unknown)
	}
	for i := range want {
		if p.unknown[i] != want[i] {
			t.Errorf("field %d = %+v, want %+v", i, p.unknown[i], want[i])
		}
	}
	if p.fm.Raw != fm {
		t.Fatalf("raw frontmatter changed: %q", p.fm.Raw)
	}
	// Non-ASCII before an unknown key still slices on the right bytes.
	p = parseDocument(doc("name: x\ndescription: héllo wörld\nx-ü: ✓ yes\n"), "x")
	if len(p.unknown) != 1 || p.unknown[0].Raw != "x-ü: ✓ yes\n" {
		t.Fatalf("unknown %+v", p.unknown)
	}
}

func FuzzParseFrontmatter(f *testing.F) {
	f.Add([]byte("---\nname: x\ndescription: d\nhooks: {a: 1}\n---\nbody"), "x")
	f.Add([]byte("---\nname: [\n---\n"), "x")
	f.Add([]byte("---\r\nmetadata:\r\n  k: &a [*a]\r\n---\r\n"), "k")
	f.Add([]byte("---\n{name: x, description: d, other: 1}\n---\n"), "x")
	f.Fuzz(func(t *testing.T, data []byte, folder string) {
		p := parseDocument(data, folder)
		for _, u := range p.unknown {
			if !strings.Contains(p.fm.Raw, u.Raw) {
				t.Fatalf("unknown field raw %q is not a slice of the frontmatter", u.Raw)
			}
		}
		if len(p.errors) == 0 && strings.TrimSpace(p.fm.Description) == "" {
			t.Fatal("skill without description accepted as valid")
		}
	})
}

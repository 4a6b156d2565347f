package bundle

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// manifest builds an execution.json from a base that passes, with fields
// overridden (a nil value deletes the field).
func manifest(t testing.TB, over map[string]any) []byte {
	t.Helper()
	m := map[string]any{
		"schemaVersion":  1,
		"entrypoint":     "scripts/run.mjs",
		"files":          []string{"scripts/run.mjs"},
		"inputSchema":    map[string]any{"type": "object", "properties": map[string]any{}},
		"outputSchema":   map[string]any{"type": "object", "properties": map[string]any{}},
		"timeoutMs":      5000,
		"maxOutputBytes": 65536,
	}
	for k, v := range over {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hasIssue(is []Issue, code, path string) bool {
	for _, i := range is {
		if (code == "" || i.Code == code) && (path == "" || i.Path == path) {
			return true
		}
	}
	return false
}

func expectIssue(t *testing.T, is []Issue, code, path string) {
	t.Helper()
	if !hasIssue(is, code, path) {
		t.Fatalf("want issue %s at %s, got %v", code, path, is)
	}
}

func TestManifestValid(t *testing.T) {
	m, is, un := ParseManifest(manifest(t, nil))
	if len(is) > 0 || m == nil || un != nil {
		t.Fatalf("valid manifest: %v %v", is, un)
	}
	if m.TimeoutMs != 5000 || m.MaxOutputBytes != 65536 || m.Runtime() != RuntimeESM || m.Files[0] != "scripts/run.mjs" {
		t.Fatalf("parsed %+v", m)
	}
	m, is, _ = ParseManifest(manifest(t, map[string]any{"entrypoint": "run.cjs", "files": []string{"run.cjs"}}))
	if len(is) > 0 || m.Runtime() != RuntimeCJS {
		t.Fatalf("cjs: %v", is)
	}
}

func TestManifestIntegerBoundsAtAndPastTheLimit(t *testing.T) {
	for _, c := range []struct {
		field string
		val   any
		ok    bool
	}{
		{"timeoutMs", 1000, true}, {"timeoutMs", 999, false}, {"timeoutMs", 120000, true}, {"timeoutMs", 120001, false},
		{"timeoutMs", 0, false}, {"timeoutMs", -1, false}, {"timeoutMs", 5000.5, false}, {"timeoutMs", "5000", false},
		{"timeoutMs", json.RawMessage("5e3"), false}, {"timeoutMs", json.RawMessage("5000.0"), false},
		{"maxOutputBytes", 1, true}, {"maxOutputBytes", 0, false}, {"maxOutputBytes", 262144, true}, {"maxOutputBytes", 262145, false},
		{"maxOutputBytes", json.RawMessage("99999999999999999999999"), false},
		{"schemaVersion", 2, false}, {"schemaVersion", 0, false}, {"schemaVersion", "1", false},
	} {
		m, is, _ := ParseManifest(manifest(t, map[string]any{c.field: c.val}))
		if c.ok != (len(is) == 0) || c.ok != (m != nil) {
			t.Errorf("%s=%v: ok=%v issues=%v", c.field, c.val, c.ok, is)
		}
		if !c.ok && !hasIssue(is, "", "$."+c.field) {
			t.Errorf("%s=%v: issue path missing: %v", c.field, c.val, is)
		}
	}
}

func TestManifestUnknownAndMissingFields(t *testing.T) {
	_, is, _ := ParseManifest(manifest(t, map[string]any{"network": true}))
	expectIssue(t, is, "unknown_field", "$.network")
	for _, f := range manifestFields {
		_, is, _ := ParseManifest(manifest(t, map[string]any{f: nil}))
		expectIssue(t, is, "missing_field", "$."+f)
	}
}

func TestManifestFiles(t *testing.T) {
	var sixtyFour []string
	for i := 0; i < 63; i++ {
		sixtyFour = append(sixtyFour, fmt.Sprintf("lib/f%02d.mjs", i))
	}
	sixtyFour = append(sixtyFour, "scripts/run.mjs")
	if _, is, _ := ParseManifest(manifest(t, map[string]any{"files": sixtyFour})); len(is) > 0 {
		t.Fatalf("64 files: %v", is)
	}
	_, is, _ := ParseManifest(manifest(t, map[string]any{"files": append(sixtyFour, "lib/extra.mjs")}))
	expectIssue(t, is, "too_many_files", "$.files")

	for _, c := range []struct {
		files []string
		code  string
		path  string
	}{
		{[]string{"scripts/run.mjs", "/etc/passwd"}, "invalid_path", "$.files[1]"},
		{[]string{"scripts/run.mjs", "../x.mjs"}, "invalid_path", "$.files[1]"},
		{[]string{"scripts/run.mjs", "a/./b"}, "invalid_path", "$.files[1]"},
		{[]string{"scripts/run.mjs", "a//b"}, "invalid_path", "$.files[1]"},
		{[]string{"scripts/run.mjs", `a\b`}, "invalid_path", "$.files[1]"},
		{[]string{"scripts/run.mjs", "a b.mjs"}, "invalid_path", "$.files[1]"},
		{[]string{"scripts/run.mjs", ""}, "invalid_path", "$.files[1]"},
		{[]string{"scripts/run.mjs", "scripts/run.mjs"}, "duplicate_file", "$.files[1]"},
		{[]string{"scripts/run.mjs", "Scripts/Run.mjs"}, "duplicate_file", "$.files[1]"},
		{[]string{"scripts/run.mjs", "SKILL.md"}, "reserved_file", "$.files[1]"},
		{[]string{"scripts/other.mjs"}, "undeclared_entrypoint", "$.files"},
	} {
		_, is, _ := ParseManifest(manifest(t, map[string]any{"files": c.files}))
		expectIssue(t, is, c.code, c.path)
	}
	_, is, _ = ParseManifest(manifest(t, map[string]any{"files": []any{"scripts/run.mjs", 3}}))
	expectIssue(t, is, "wrong_type", "$.files[1]")
	_, is, _ = ParseManifest(manifest(t, map[string]any{"files": "scripts/run.mjs"}))
	expectIssue(t, is, "wrong_type", "$.files")
	long := strings.Repeat("a", 255) + ".mjs"
	_, is, _ = ParseManifest(manifest(t, map[string]any{"files": []string{"scripts/run.mjs", long}}))
	expectIssue(t, is, "invalid_path", "$.files[1]")
}

func TestManifestUnsupportedRuntimes(t *testing.T) {
	for _, ext := range []string{".js", ".ts", ".py", ".sh"} {
		ep := "scripts/run" + ext
		m, is, un := ParseManifest(manifest(t, map[string]any{"entrypoint": ep, "files": []string{ep}}))
		if m != nil || len(un) != 1 || !strings.HasPrefix(un[0], ep) {
			t.Errorf("%s: unsupported=%v", ext, un)
		}
		expectIssue(t, is, "unsupported_runtime", "$.entrypoint")
	}
	_, is, _ := ParseManifest(manifest(t, map[string]any{"entrypoint": "run.exe", "files": []string{"run.exe"}}))
	expectIssue(t, is, "unsupported_runtime", "$.entrypoint")
}

func TestManifestDocumentRules(t *testing.T) {
	at := manifest(t, nil)
	pad := MaxManifestBytes - len(at)
	exact := append(append([]byte{}, at...), []byte(strings.Repeat(" ", pad))...)
	if _, is, _ := ParseManifest(exact); len(is) > 0 {
		t.Fatalf("manifest of exactly %d bytes: %v", len(exact), is)
	}
	_, is, _ := ParseManifest(append(exact, ' '))
	expectIssue(t, is, "manifest_too_large", "$")

	for _, c := range []struct {
		doc  string
		code string
	}{
		{"\xef\xbb\xbf{}", "bom"},
		{"{\"schemaVersion\": 1, \"x\": \"\xff\"}", "invalid_utf8"},
		{`[]`, "not_object"},
		{`{"schemaVersion":1} {}`, "trailing_data"},
		{`{"schemaVersion":1,"schemaVersion":1}`, "duplicate_key"},
		{`{"schemaVersion":NaN}`, "invalid_json"},
		{`{"schemaVersion":Infinity}`, "invalid_json"},
		{`{"schemaVersion":1`, "truncated_json"},
		{``, "truncated_json"},
		{`{"__proto__":{}}`, "forbidden_key"},
	} {
		_, is, _ := ParseManifest([]byte(c.doc))
		if len(is) != 1 || is[0].Code != c.code {
			t.Errorf("%q: %v, want %s", c.doc, is, c.code)
		}
	}
}

func TestManifestIssuesAreCapped(t *testing.T) {
	over := map[string]any{}
	for i := 0; i < 40; i++ {
		over[fmt.Sprintf("unknown%02d", i)] = i
	}
	_, is, _ := ParseManifest(manifest(t, over))
	if len(is) != MaxIssues {
		t.Fatalf("%d issues, want %d", len(is), MaxIssues)
	}
}

func TestManifestParseIsDeterministic(t *testing.T) {
	doc := manifest(t, map[string]any{"a": 1, "b": 2, "timeoutMs": 1, "files": []string{"/x"}})
	_, first, _ := ParseManifest(doc)
	for i := 0; i < 20; i++ {
		_, again, _ := ParseManifest(doc)
		if fmt.Sprint(again) != fmt.Sprint(first) {
			t.Fatalf("issue order changed: %v vs %v", again, first)
		}
	}
}

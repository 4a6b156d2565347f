package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/artifact"
)

var runtimeOK = InspectOptions{Runtime: func() error { return nil }}

func TestInspectShippedBundles(t *testing.T) {
	for _, name := range []string{"memory-organization", "text-metrics"} {
		dir := filepath.Join("..", "..", "bundles", name)
		ex := Inspect(dir, runtimeOK)
		if !ex.Available || len(ex.Issues) > 0 || ex.Reason != "" {
			t.Fatalf("%s: %+v", name, ex.Issues)
		}
		snap, err := artifact.Capture(dir, ex.Manifest.Files)
		if err != nil || snap.Revision() != ex.Revision {
			t.Fatalf("%s: revision %s vs capture %v", name, ex.Revision, err)
		}
	}
	ex := Inspect(filepath.Join("..", "..", "bundles", "commit-message-style"), runtimeOK)
	if ex.Available || ex.Reason != ReasonPromptOnly || len(ex.Issues) != 0 {
		t.Fatalf("prompt-only: %+v", ex)
	}
}

// copyBundle copies a shipped bundle into a temp folder for mutation.
func copyBundle(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "bundles", name)
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestInspectReportsEachBlocker(t *testing.T) {
	t.Run("no runtime pinned", func(t *testing.T) {
		ex := Inspect(copyBundle(t, "text-metrics"), InspectOptions{})
		if ex.Available || !hasIssue(ex.Issues, "runtime_unavailable", "runtime") || ex.Revision == "" {
			t.Fatalf("%+v", ex)
		}
	})
	t.Run("runtime changed", func(t *testing.T) {
		ex := Inspect(copyBundle(t, "text-metrics"), InspectOptions{Runtime: func() error { return errors.New("pinned node changed") }})
		if ex.Available || !hasIssue(ex.Issues, "runtime_unavailable", "runtime") {
			t.Fatalf("%+v", ex)
		}
	})
	t.Run("invalid SKILL.md", func(t *testing.T) {
		ex := Inspect(copyBundle(t, "text-metrics"), InspectOptions{SkillInvalid: "no description", Runtime: runtimeOK.Runtime})
		if ex.Available || !hasIssue(ex.Issues, "invalid_skill", "SKILL.md") {
			t.Fatalf("%+v", ex)
		}
	})
	t.Run("undeclared import", func(t *testing.T) {
		dir := copyBundle(t, "text-metrics")
		run := filepath.Join(dir, "scripts", "run.cjs")
		b, _ := os.ReadFile(run)
		os.WriteFile(run, append([]byte("const x = require('left-pad');\n"), b...), 0o644)
		ex := Inspect(dir, runtimeOK)
		if ex.Available || !hasIssue(ex.Issues, "undeclared_import", "scripts/run.cjs:1:19") {
			t.Fatalf("%+v", ex.Issues)
		}
	})
	t.Run("symlinked declared file", func(t *testing.T) {
		dir := copyBundle(t, "text-metrics")
		lib := filepath.Join(dir, "scripts", "lib", "count.cjs")
		os.Rename(lib, filepath.Join(dir, "count.real"))
		os.Symlink(filepath.Join(dir, "count.real"), lib)
		ex := Inspect(dir, runtimeOK)
		if ex.Available || !hasIssue(ex.Issues, "symlink_or_not_directory", "scripts/lib/count.cjs") || ex.Revision != "" {
			t.Fatalf("%+v", ex)
		}
	})
	t.Run("oversize declared file", func(t *testing.T) {
		dir := copyBundle(t, "text-metrics")
		os.WriteFile(filepath.Join(dir, "scripts", "lib", "count.cjs"), []byte(strings.Repeat("/", MaxFileBytes+1)), 0o644)
		ex := Inspect(dir, runtimeOK)
		if ex.Available || !hasIssue(ex.Issues, "file_too_large", "scripts/lib/count.cjs") {
			t.Fatalf("%+v", ex.Issues)
		}
	})
	t.Run("unsupported runtime", func(t *testing.T) {
		dir := copyBundle(t, "text-metrics")
		os.WriteFile(filepath.Join(dir, "execution.json"), manifest(t, map[string]any{"entrypoint": "run.py", "files": []string{"run.py"}}), 0o644)
		ex := Inspect(dir, runtimeOK)
		if ex.Available || len(ex.Unsupported) != 1 || !strings.HasPrefix(ex.Unsupported[0], "run.py") {
			t.Fatalf("%+v", ex)
		}
	})
	t.Run("symlinked execution.json", func(t *testing.T) {
		dir := copyBundle(t, "text-metrics")
		os.Rename(filepath.Join(dir, "execution.json"), filepath.Join(dir, "m.json"))
		os.Symlink("m.json", filepath.Join(dir, "execution.json"))
		ex := Inspect(dir, runtimeOK)
		if ex.Available || ex.Reason != ReasonIssues || !hasIssue(ex.Issues, "symlink_or_not_directory", "execution.json") {
			t.Fatalf("%+v", ex)
		}
	})
}

// The example assets shipped with each bundle are real invocations and
// results: they must pass the same checks a run applies.
func TestShippedExamplesMatchTheirSchemas(t *testing.T) {
	for _, name := range []string{"memory-organization", "text-metrics"} {
		dir := filepath.Join("..", "..", "bundles", name)
		ex := Inspect(dir, runtimeOK)
		in, is := CompileSchema(ex.Manifest.InputSchema, true)
		out, os2 := CompileSchema(ex.Manifest.OutputSchema, false)
		if len(is)+len(os2) > 0 {
			t.Fatalf("%s: %v %v", name, is, os2)
		}
		input, err := os.ReadFile(filepath.Join(dir, "assets", "example-input.json"))
		if err != nil {
			t.Fatal(err)
		}
		if _, is := ValidateInvocation(in, input); len(is) > 0 {
			t.Errorf("%s example input: %v", name, is)
		}
		output, err := os.ReadFile(filepath.Join(dir, "assets", "example-output.json"))
		if err != nil {
			t.Fatal(err)
		}
		if _, is := ValidateResult(out, output, ex.Manifest.MaxOutputBytes); len(is) > 0 {
			t.Errorf("%s example output: %v", name, is)
		}
	}
}

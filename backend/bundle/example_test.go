package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bundle's assets/example-input.json is offered only when it is a valid
// input read with the bundle's safe opens: at the invocation limit it is,
// one byte past it, invalid against the schema, or behind a symlink it is
// not (and says why); a bundle without one offers nothing.
func TestExampleInput(t *testing.T) {
	tm := filepath.Join("..", "..", "bundles", "text-metrics")
	if plain := Inspect(tm, runtimeOK); plain.ExampleInput != nil {
		t.Fatal("Inspect alone read the example input")
	}
	shipped := WithExampleInput(tm, Inspect(tm, runtimeOK))
	want, _ := os.ReadFile(filepath.Join("..", "..", "bundles", "text-metrics", ExampleInputFile))
	if shipped.ExampleInput == nil || shipped.ExampleInput.Path != ExampleInputFile || shipped.ExampleInput.Text != string(want) || shipped.ExampleInputProblem != "" {
		t.Fatalf("shipped example: %+v %q", shipped.ExampleInput, shipped.ExampleInputProblem)
	}
	sized := func(n int) string { // {"text":"aaa…"} of exactly n bytes
		return `{"text":"` + strings.Repeat("a", n-len(`{"text":""}`)) + `"}`
	}
	cases := []struct {
		name    string
		write   func(dir string)
		offered bool
		problem string
	}{
		{"at the limit", func(d string) { write(t, d, sized(MaxInvocationBytes)) }, true, ""},
		{"one past the limit", func(d string) { write(t, d, sized(MaxInvocationBytes+1)) }, false, "too_large"},
		{"not the schema", func(d string) { write(t, d, `{"words":1}`) }, false, "not a valid input"},
		{"not JSON", func(d string) { write(t, d, `{"text":`) }, false, "not a valid input"},
		{"a symlink", func(d string) {
			p := filepath.Join(d, ExampleInputFile)
			os.Remove(p)
			if err := os.Symlink(filepath.Join(d, "assets", "example-output.json"), p); err != nil {
				t.Fatal(err)
			}
		}, false, "not offered"},
		{"none", func(d string) { os.Remove(filepath.Join(d, ExampleInputFile)) }, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyBundle(t, "text-metrics")
			c.write(dir)
			ex := WithExampleInput(dir, Inspect(dir, runtimeOK))
			if (ex.ExampleInput != nil) != c.offered {
				t.Fatalf("offered %v, want %v (problem %q)", ex.ExampleInput != nil, c.offered, ex.ExampleInputProblem)
			}
			if c.problem == "" && ex.ExampleInputProblem != "" || c.problem != "" && !strings.Contains(ex.ExampleInputProblem, c.problem) {
				t.Fatalf("problem %q, want one containing %q", ex.ExampleInputProblem, c.problem)
			}
			if !ex.Available {
				t.Fatalf("the example input changed the bundle's availability: %+v", ex.Issues)
			}
		})
	}
}

func write(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ExampleInputFile), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

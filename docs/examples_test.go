package docs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/capture/record"
	"github.com/gatehouse/gatehouse/backend/compare"
	"github.com/gatehouse/gatehouse/backend/evidence"
	"github.com/gatehouse/gatehouse/backend/policy"
	"github.com/gatehouse/gatehouse/backend/reactive"
	"github.com/gatehouse/gatehouse/backend/replay"
)

// exampleParsers maps each folder of docs/examples/ to the real parser of
// its format; each returns the codes of the issues it reported (none for
// a valid document).
var exampleParsers = map[string]func([]byte) []string{
	"execution-json": func(b []byte) []string {
		_, issues, _ := bundle.ParseManifest(b)
		return codes(issues, func(i bundle.Issue) string { return i.Code })
	},
	"execution-policy": func(b []byte) []string {
		_, err := policy.ParseExecution(b)
		var ve *policy.ValidationError
		if err == nil {
			return nil
		}
		if !errors.As(err, &ve) {
			return []string{"<not a ValidationError: " + err.Error() + ">"}
		}
		return codes(ve.Fields, func(f policy.FieldError) string { return f.Code })
	},
	"capture-operator-policy": func(b []byte) []string {
		_, issues := policy.ParseCaptureSettings(b)
		return codes(issues, func(i policy.CaptureIssue) string { return i.Code })
	},
	"capture-scenario": func(b []byte) []string {
		_, issues := capture.ParseScenario(b)
		return codes(issues, func(i capture.Issue) string { return i.Code })
	},
	"reactive-scenario": func(b []byte) []string {
		// Parse checks the schema and the graph; Preflight is what a
		// capture refuses before it launches anything.
		sc, issues := reactive.Parse(b, reactive.Context{})
		if len(issues) == 0 {
			issues = reactive.Preflight(sc, "$", nil)
		}
		return codes(issues, func(i reactive.Issue) string { return i.Code })
	},
	"replay-machine": func(b []byte) []string {
		_, issues := replay.ParseMachine(b)
		return codes(issues, func(i replay.Issue) string { return i.Code })
	},
	"replay-run": func(b []byte) []string {
		_, issues := replay.ParseRun(b)
		return codes(issues, func(i replay.Issue) string { return i.Code })
	},
	"trace-spec": func(b []byte) []string {
		_, err := compare.ParseTraceSpec(b)
		if err == nil {
			return nil
		}
		var ce *compare.Error
		if !errors.As(err, &ce) {
			return []string{"<not a compare.Error: " + err.Error() + ">"}
		}
		return codes(ce.Issues, func(i compare.Issue) string { return i.Code })
	},
	"evidence-envelope": func(b []byte) []string {
		// The envelope first; for Process Capture Evidence, then the
		// capture record it carries (what `gatehouse evidence verify`
		// checks).
		e, issues := evidence.Parse(b)
		if len(issues) == 0 && e.PredicateType == evidence.PredicateProcessCapture {
			issues = record.Verify(e.NormalizedResult)
		}
		return codes(issues, func(i evidence.Issue) string { return i.Code })
	},
}

func codes[T any](list []T, code func(T) string) []string {
	var out []string
	for _, x := range list {
		out = append(out, code(x))
	}
	return out
}

// TestExamples feeds every file under docs/examples/ to the real parser
// of its format: valid-*.json must be accepted; broken-CODE.json (or
// broken-CODE--detail.json) must be rejected, with CODE among the codes
// reported. Every folder must hold at least one valid and one broken
// example, and every folder must have a parser.
func TestExamples(t *testing.T) {
	dirs, err := os.ReadDir("examples")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		parse, ok := exampleParsers[d.Name()]
		if !ok {
			t.Errorf("docs/examples/%s: no parser is registered for this folder", d.Name())
			continue
		}
		seen[d.Name()] = true
		files, err := filepath.Glob(filepath.Join("examples", d.Name(), "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		valid, broken := 0, 0
		for _, f := range files {
			name := filepath.Base(f)
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := parse(data)
			switch {
			case strings.HasPrefix(name, "valid-"):
				valid++
				if len(got) > 0 {
					t.Errorf("%s: a valid example was rejected: %v", f, got)
				}
			case strings.HasPrefix(name, "broken-"):
				broken++
				want := strings.TrimSuffix(strings.TrimPrefix(name, "broken-"), ".json")
				want, _, _ = strings.Cut(want, "--")
				if !slices.Contains(got, want) {
					t.Errorf("%s: want code %s, got %v", f, want, got)
				}
			default:
				t.Errorf("%s: an example is named valid-*.json or broken-CODE.json", f)
			}
		}
		if valid == 0 || broken == 0 {
			t.Errorf("docs/examples/%s: has %d valid and %d broken examples; each format needs both", d.Name(), valid, broken)
		}
	}
	for name := range exampleParsers {
		if !seen[name] {
			t.Errorf("docs/examples/%s: missing (a parser is registered for it)", name)
		}
	}
}

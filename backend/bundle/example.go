package bundle

import (
	"errors"
	"fmt"

	"github.com/gatehouse/gatehouse/backend/artifact"
)

// ExampleInputFile is where a bundle ships an example invocation, relative
// to the bundle folder (docs/formats/execution-json.md, "Example input").
const ExampleInputFile = "assets/example-input.json"

// ExampleInput is a bundle's example invocation, offered to fill the Run
// form: a valid invocation of the bundle's input schema. It is a
// convenience, not part of the revision: the person sees it in the form
// and, like any input, it is validated again and consented to on Run.
type ExampleInput struct {
	// Path is the file it was read from, bundle-relative.
	Path string `json:"path"`
	// Text is the file's content, exactly (valid UTF-8 JSON).
	Text string `json:"text"`
}

// WithExampleInput returns ex (Inspect's result for the bundle in dir) with
// its ExampleInput or ExampleInputProblem filled; ex without a manifest is
// returned as it is.
func WithExampleInput(dir string, ex Execution) Execution {
	if ex.Manifest != nil && dir != "" {
		ex.ExampleInput, ex.ExampleInputProblem = exampleInput(dir, ex.Manifest)
	}
	return ex
}

// exampleInput reads ExampleInputFile below dir with the bundle's safe
// opens (no symlinks, a regular file, at most MaxInvocationBytes) and
// checks it as an invocation of m's input schema. It returns nil and ""
// when the bundle ships none, or nil and why it is not offered.
func exampleInput(dir string, m *Manifest) (*ExampleInput, string) {
	raw, err := artifact.ReadFile(dir, ExampleInputFile, MaxInvocationBytes)
	var ae *artifact.Error
	if errors.As(err, &ae) && ae.Code == "missing" {
		return nil, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("%s is not offered: %v", ExampleInputFile, err)
	}
	schema, issues := CompileSchema(m.InputSchema, true)
	if len(issues) > 0 {
		return nil, fmt.Sprintf("%s is not offered: the input schema does not compile", ExampleInputFile)
	}
	if _, issues := ValidateInvocation(schema, raw); len(issues) > 0 {
		return nil, fmt.Sprintf("%s is not offered: it is not a valid input (%s at %s: %s)", ExampleInputFile, issues[0].Code, issues[0].Path, issues[0].Message)
	}
	return &ExampleInput{Path: ExampleInputFile, Text: string(raw)}, ""
}

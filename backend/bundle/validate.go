package bundle

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// MaxInvocationBytes bounds one invocation document (excluding framing).
const MaxInvocationBytes = 64 << 10

// Schema is a compiled schema from the bounded subset. It is safe for
// concurrent use.
type Schema struct {
	compiled *jsonschema.Schema
}

// CompileSchema checks v against the subset (see CheckSchema) and compiles
// it with github.com/santhosh-tekuri/jsonschema/v5 (draft 2020-12, no
// remote or file loading, no format assertions). The subset check decides
// what is admitted; the library does the validating.
func CompileSchema(v *Value, inputRoot bool) (*Schema, []Issue) {
	if is := CheckSchema(v, "$", inputRoot); len(is) > 0 {
		return nil, is
	}
	raw, _ := v.MarshalJSON()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(u string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("schema loading is disabled (%s)", u)
	}
	const url = "gatehouse:///schema.json"
	if err := c.AddResource(url, strings.NewReader(string(raw))); err != nil {
		return nil, []Issue{{Code: "schema_compile", Path: "$", Message: err.Error()}}
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, []Issue{{Code: "schema_compile", Path: "$", Message: err.Error()}}
	}
	return &Schema{compiled: s}, nil
}

// ValidateInvocation checks one invocation document: at most
// MaxInvocationBytes, valid UTF-8 without a BOM, exactly one JSON object
// within the shared depth and node limits, valid against s. It returns the
// parsed value when there are no issues.
func ValidateInvocation(s *Schema, data []byte) (*Value, []Issue) {
	if len(data) > MaxInvocationBytes {
		return nil, []Issue{{Code: "input_too_large", Path: "$", Message: fmt.Sprintf("invocation is %d bytes; the limit is %d", len(data), MaxInvocationBytes)}}
	}
	v, iss := ParseJSON(data)
	if iss != nil {
		return nil, []Issue{*iss}
	}
	if v.Kind != Object {
		return nil, []Issue{{Code: "not_object", Path: "$", Message: "the invocation must be a JSON object"}}
	}
	if is := s.Validate(v); len(is) > 0 {
		return nil, is
	}
	return v, nil
}

// ValidateResult checks a script's complete stdout: at most maxOutputBytes,
// valid UTF-8 without a BOM, exactly one JSON value (surrounding whitespace
// allowed) within the shared limits, valid against s. Error messages
// describe the problem without echoing the output.
func ValidateResult(s *Schema, data []byte, maxOutputBytes int) (*Value, []Issue) {
	if len(data) > maxOutputBytes {
		return nil, []Issue{{Code: "output_too_large", Path: "$", Message: fmt.Sprintf("output exceeds maxOutputBytes (%d)", maxOutputBytes)}}
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, []Issue{{Code: "missing_output", Path: "$", Message: "the script printed no JSON value"}}
	}
	v, iss := ParseJSON(data)
	if iss != nil {
		return nil, []Issue{*iss}
	}
	if is := s.Validate(v); len(is) > 0 {
		return nil, is
	}
	return v, nil
}

// Validate checks an already parsed value against s and returns at most
// MaxIssues leaf issues, each with the instance's JSON path and a stable
// code named after the failing keyword.
func (s *Schema) Validate(v *Value) []Issue {
	err := s.compiled.Validate(v.Interface())
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []Issue{{Code: "validation_error", Path: "$", Message: err.Error()}}
	}
	var c collector
	collectLeaves(&c, v, ve)
	if len(c.issues) == 0 {
		c.add(keywordCode(ve.KeywordLocation), pointerToPath(v, ve.InstanceLocation), ve.Message)
	}
	return c.issues
}

func collectLeaves(c *collector, v *Value, ve *jsonschema.ValidationError) {
	if len(ve.Causes) == 0 {
		if ve.KeywordLocation != "" {
			c.add(keywordCode(ve.KeywordLocation), pointerToPath(v, ve.InstanceLocation), ve.Message)
		}
		return
	}
	for _, cause := range ve.Causes {
		collectLeaves(c, v, cause)
	}
}

// keywordCodes turns the failing keyword into a stable issue code.
var keywordCodes = map[string]string{
	"type": "type_mismatch", "required": "missing_property", "additionalProperties": "unexpected_property",
	"enum": "not_in_enum", "minLength": "too_short", "maxLength": "too_long",
	"minItems": "too_few_items", "maxItems": "too_many_items",
	"minimum": "below_minimum", "maximum": "above_maximum", "anyOf": "no_branch_matched",
}

func keywordCode(loc string) string {
	kw := loc[strings.LastIndex(loc, "/")+1:]
	if c, ok := keywordCodes[kw]; ok {
		return c
	}
	return "schema_violation"
}

// pointerToPath converts a JSON pointer ("/facts/3/id") into the JSON path
// of the one path syntax ("$.facts[3].id"), following the pointer through
// the document v so that an array element is an index and an object member
// a name even when the name is made of digits (`$["0"]`, not "$[0]").
func pointerToPath(v *Value, ptr string) string {
	out := "$"
	if ptr == "" {
		return out
	}
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if v != nil && v.Kind == Array {
			if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(v.Elems) {
				out += strictjson.IndexPath(i)
				v = v.Elems[i]
				continue
			}
		}
		out = JoinPath(out, seg)
		if v != nil {
			v = get(v, seg)
		}
	}
	return out
}

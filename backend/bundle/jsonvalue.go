package bundle

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Shared JSON limits for schemas, invocations and results.
const (
	// MaxDepth is the deepest nesting admitted; the root value is at depth 1
	// and every value inside a container is one deeper than the container.
	MaxDepth = 32
	// MaxNodes is the most JSON values (scalars and containers, not object
	// keys) one document may hold.
	MaxNodes = 4096
)

// Kind is the JSON type of a Value.
type Kind = strictjson.Kind

// The JSON kinds.
const (
	Null   = strictjson.Null
	Bool   = strictjson.Bool
	Number = strictjson.Number
	String = strictjson.String
	Array  = strictjson.Array
	Object = strictjson.Object
)

// Value is a parsed JSON value: the shared strict decoder's tree, which
// keeps object member order (Keys, Vals) and the exact number literal
// (Str), so checks report deterministic paths and never round numbers.
// Interface gives the plain Go form the schema validator consumes and
// MarshalJSON writes it back with member order preserved.
type Value = strictjson.Node

// get returns the member of v named key, or nil.
func get(v *Value, key string) *Value {
	m, _ := v.Member(key)
	return m
}

// Forbidden object keys: a script that copies parsed JSON onto an object
// with ordinary assignment would otherwise let the document replace its
// prototype.
const protoKey = "__proto__"

// ParseJSON parses exactly one JSON document. It rejects invalid UTF-8, a
// byte order mark, duplicate object keys, any "__proto__" key, NaN and
// Infinity (which are not JSON), trailing data after the first value, and
// documents deeper than MaxDepth or with more than MaxNodes values. The
// limits are enforced while tokens stream in, so an oversized document is
// refused without being built. Leading and trailing whitespace is allowed.
// The returned Issue's path locates the problem.
func ParseJSON(data []byte) (*Value, *Issue) {
	return parseJSON(data, MaxDepth, MaxNodes)
}

// jsonOptions make the shared strict decoder keep this package's contract:
// every value, scalars included, counts against the depth limit; numbers
// are kept as written; and the codes and messages are
// the ones bundle has always reported. Only the first issue is reported.
func jsonOptions(maxDepth, maxNodes int) strictjson.Options {
	return strictjson.Options{
		MaxDepth:       maxDepth,
		MaxValues:      maxNodes,
		ScalarDepth:    true,
		LiteralNumbers: true,
		ForbiddenKeys:  []string{protoKey},
		Codes:          strictjson.Codes{Truncated: "truncated_json", Trailing: "trailing_data", TooLarge: "too_many_nodes"},
		Wording: strictjson.Wording{
			Syntax:          "not valid JSON near offset %d: %v",
			EOF:             "document ends before the JSON value is complete",
			Trailing:        "unexpected data after the JSON value at offset %d",
			DuplicateFormat: "key %q appears more than once",
			Forbidden:       "the key %q is not allowed",
			TooLarge:        "document has more than %d JSON values",
			TooDeep:         fmt.Sprintf("nesting exceeds the limit of %d levels", MaxDepth),
		},
	}
}

func parseJSON(data []byte, maxDepth, maxNodes int) (*Value, *Issue) {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, &Issue{Code: "bom", Path: "$", Message: "document starts with a byte order mark"}
	}
	if !utf8.Valid(data) {
		return nil, &Issue{Code: "invalid_utf8", Path: "$", Message: fmt.Sprintf("document is not valid UTF-8 (first bad byte at offset %d)", strictjson.FirstInvalidUTF8(data))}
	}
	issues := strictjson.Collector{Max: 1}
	n := strictjson.Decode(data, "$", jsonOptions(maxDepth, maxNodes), &issues)
	if !issues.Empty() {
		is := issues.List[0]
		return nil, &Issue{Code: is.Code, Path: is.Path, Message: is.Message}
	}
	return n, nil
}

// JoinPath appends an object key to a JSON path in the one path syntax of
// every Gatehouse parser (strictjson.KeyPath): $.name for identifier keys,
// $["odd key"] otherwise.
func JoinPath(path, key string) string { return strictjson.JoinPath(path, key) }

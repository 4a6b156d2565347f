package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
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
type Kind int

// The JSON kinds.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is a parsed JSON value that keeps object member order and the exact
// number literal, so checks can report deterministic paths and never round
// numbers.
type Value struct {
	Kind    Kind
	Bool    bool
	Num     json.Number
	Str     string
	Items   []*Value
	Members []Member
}

// Member is one object member.
type Member struct {
	Key   string
	Value *Value
}

// Get returns the member named key, or nil.
func (v *Value) Get(key string) *Value {
	for _, m := range v.Members {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// Interface converts v to the plain Go form (map[string]any, []any,
// json.Number, string, bool, nil) that the schema validator consumes.
func (v *Value) Interface() any {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Number:
		return v.Num
	case String:
		return v.Str
	case Array:
		out := make([]any, len(v.Items))
		for i, it := range v.Items {
			out[i] = it.Interface()
		}
		return out
	case Object:
		out := make(map[string]any, len(v.Members))
		for _, m := range v.Members {
			out[m.Key] = m.Value.Interface()
		}
		return out
	}
	return nil
}

// MarshalJSON writes v back as compact JSON with member order preserved.
func (v *Value) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	v.write(&b)
	return b.Bytes(), nil
}

func (v *Value) write(b *bytes.Buffer) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Number:
		b.WriteString(string(v.Num))
	case String:
		s, _ := json.Marshal(v.Str)
		b.Write(s)
	case Array:
		b.WriteByte('[')
		for i, it := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.write(b)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, m := range v.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(m.Key)
			b.Write(k)
			b.WriteByte(':')
			m.Value.write(b)
		}
		b.WriteByte('}')
	}
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
	return fromNode(n), nil
}

// fromNode converts the shared decoder's tree, whose depth it has bounded,
// to Value, which stays this package's exported tree (Manifest and the
// schema and invocation checks use it).
func fromNode(n *strictjson.Node) *Value {
	switch n.Kind {
	case strictjson.Bool:
		return &Value{Kind: Bool, Bool: n.Bool}
	case strictjson.Number:
		return &Value{Kind: Number, Num: json.Number(n.Str)}
	case strictjson.String:
		return &Value{Kind: String, Str: n.Str}
	case strictjson.Array:
		v := &Value{Kind: Array}
		for _, e := range n.Elems {
			v.Items = append(v.Items, fromNode(e))
		}
		return v
	case strictjson.Object:
		v := &Value{Kind: Object}
		for i, k := range n.Keys {
			v.Members = append(v.Members, Member{Key: k, Value: fromNode(n.Vals[i])})
		}
		return v
	}
	return &Value{Kind: Null}
}

// JoinPath appends an object key to a JSON path in the one path syntax of
// every Gatehouse parser (strictjson.KeyPath): $.name for identifier keys,
// $["odd key"] otherwise.
func JoinPath(path, key string) string { return strictjson.JoinPath(path, key) }

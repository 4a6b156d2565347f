package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
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

func parseJSON(data []byte, maxDepth, maxNodes int) (*Value, *Issue) {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return nil, &Issue{Code: "bom", Path: "$", Message: "document starts with a byte order mark"}
	}
	if !utf8.Valid(data) {
		return nil, &Issue{Code: "invalid_utf8", Path: "$", Message: fmt.Sprintf("document is not valid UTF-8 (first bad byte at offset %d)", firstInvalidUTF8(data))}
	}
	p := &parser{dec: json.NewDecoder(bytes.NewReader(data)), maxDepth: maxDepth, maxNodes: maxNodes}
	p.dec.UseNumber()
	v, iss := p.value("$", 1)
	if iss != nil {
		return nil, iss
	}
	if _, err := p.dec.Token(); err != io.EOF {
		return nil, &Issue{Code: "trailing_data", Path: "$", Message: fmt.Sprintf("unexpected data after the JSON value at offset %d", p.dec.InputOffset())}
	}
	return v, nil
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

type parser struct {
	dec                       *json.Decoder
	nodes, maxNodes, maxDepth int
}

func (p *parser) syntax(path string, err error) *Issue {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Issue{Code: "truncated_json", Path: path, Message: "document ends before the JSON value is complete"}
	}
	return &Issue{Code: "invalid_json", Path: path, Message: fmt.Sprintf("not valid JSON near offset %d: %v", p.dec.InputOffset(), err)}
}

func (p *parser) value(path string, depth int) (*Value, *Issue) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, p.syntax(path, err)
	}
	p.nodes++
	if p.nodes > p.maxNodes {
		return nil, &Issue{Code: "too_many_nodes", Path: path, Message: fmt.Sprintf("document has more than %d JSON values", p.maxNodes)}
	}
	if depth > p.maxDepth {
		return nil, &Issue{Code: "too_deep", Path: path, Message: fmt.Sprintf("nesting exceeds the limit of %d levels", MaxDepth)}
	}
	switch t := tok.(type) {
	case nil:
		return &Value{Kind: Null}, nil
	case bool:
		return &Value{Kind: Bool, Bool: t}, nil
	case json.Number:
		return &Value{Kind: Number, Num: t}, nil
	case string:
		return &Value{Kind: String, Str: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := &Value{Kind: Array}
			for p.dec.More() {
				it, iss := p.value(fmt.Sprintf("%s[%d]", path, len(v.Items)), depth+1)
				if iss != nil {
					return nil, iss
				}
				v.Items = append(v.Items, it)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, p.syntax(path, err)
			}
			return v, nil
		case '{':
			v := &Value{Kind: Object}
			seen := map[string]bool{}
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.syntax(path, err)
				}
				key, _ := kt.(string)
				kp := JoinPath(path, key)
				if key == protoKey {
					return nil, &Issue{Code: "forbidden_key", Path: kp, Message: `the key "__proto__" is not allowed`}
				}
				if seen[key] {
					return nil, &Issue{Code: "duplicate_key", Path: kp, Message: fmt.Sprintf("key %q appears more than once", key)}
				}
				seen[key] = true
				mv, iss := p.value(kp, depth+1)
				if iss != nil {
					return nil, iss
				}
				v.Members = append(v.Members, Member{Key: key, Value: mv})
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, p.syntax(path, err)
			}
			return v, nil
		}
	}
	return nil, &Issue{Code: "invalid_json", Path: path, Message: fmt.Sprintf("unexpected token %v", tok)}
}

// JoinPath appends an object key to a JSON path: $.name for identifier-like
// keys, $["odd key"] otherwise.
func JoinPath(path, key string) string {
	if isIdent(key) {
		return path + "." + key
	}
	q, _ := json.Marshal(key)
	return path + "[" + string(q) + "]"
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
		case i > 0 && ((r >= '0' && r <= '9') || r == '-'):
		default:
			return false
		}
	}
	return true
}

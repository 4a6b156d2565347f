package strictjson

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Kind is the JSON type of a Node.
type Kind byte

// The JSON types.
const (
	Null   Kind = 'z'
	Bool   Kind = 'b'
	Number Kind = 'n'
	String Kind = 's'
	Array  Kind = 'a'
	Object Kind = 'o'
)

// String names the kind for messages ("an object", "null").
func (k Kind) String() string {
	switch k {
	case Object:
		return "an object"
	case Array:
		return "an array"
	case String:
		return "a string"
	case Number:
		return "a number"
	case Bool:
		return "a boolean"
	}
	return "null"
}

// Node is one decoded JSON value. Objects keep their own members in
// document order and nothing else: there is no prototype, so a key such as
// "__proto__" or "constructor" is an ordinary member name that exists only
// when the document holds it. Duplicate members are kept only when
// Options.KeepDuplicates is set. Numbers keep their literal in Str. Off and
// End locate the value's text in the decoded input (data[Off:End]).
type Node struct {
	Kind     Kind
	Bool     bool
	Str      string // string content, or the number literal
	Keys     []string
	Vals     []*Node
	Elems    []*Node
	Off, End int
}

// Member returns the object's first own member named key.
func (n *Node) Member(key string) (*Node, bool) {
	if n.Kind != Object {
		return nil, false
	}
	for i, k := range n.Keys {
		if k == key {
			return n.Vals[i], true
		}
	}
	return nil, false
}

// AppendJSON appends the compact JSON encoding of n. Strings are escaped by
// encoding/json, numbers keep their literal.
func (n *Node) AppendJSON(buf []byte) []byte {
	switch n.Kind {
	case Object:
		buf = append(buf, '{')
		for i, k := range n.Keys {
			if i > 0 {
				buf = append(buf, ',')
			}
			q, _ := json.Marshal(k)
			buf = append(buf, q...)
			buf = append(buf, ':')
			buf = n.Vals[i].AppendJSON(buf)
		}
		return append(buf, '}')
	case Array:
		buf = append(buf, '[')
		for i, e := range n.Elems {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = e.AppendJSON(buf)
		}
		return append(buf, ']')
	case String:
		q, _ := json.Marshal(n.Str)
		return append(buf, q...)
	case Number:
		return append(buf, n.Str...)
	case Bool:
		return strconv.AppendBool(buf, n.Bool)
	}
	return append(buf, "null"...)
}

// MarshalJSON writes n back as compact JSON (AppendJSON): member order and
// number literals are kept.
func (n *Node) MarshalJSON() ([]byte, error) { return n.AppendJSON(nil), nil }

// Interface converts n to the plain Go values encoding/json decodes into
// any with UseNumber (nil, bool, json.Number, string, []any,
// map[string]any), which schema validators and value comparisons consume.
// Of repeated member names (Options.KeepDuplicates) the first is kept.
func (n *Node) Interface() any {
	switch n.Kind {
	case Bool:
		return n.Bool
	case Number:
		return json.Number(n.Str)
	case String:
		return n.Str
	case Array:
		out := make([]any, len(n.Elems))
		for i, e := range n.Elems {
			out[i] = e.Interface()
		}
		return out
	case Object:
		out := make(map[string]any, len(n.Keys))
		for i, k := range n.Keys {
			if _, dup := out[k]; !dup {
				out[k] = n.Vals[i].Interface()
			}
		}
		return out
	}
	return nil
}

// Raw returns the compact JSON encoding of n.
func (n *Node) Raw() json.RawMessage { return n.AppendJSON(nil) }

// Equal compares two values structurally: object member order does not
// matter and numbers compare by their numeric value.
func Equal(a, b *Node) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case Null:
		return true
	case Bool:
		return a.Bool == b.Bool
	case String:
		return a.Str == b.Str
	case Number:
		if a.Str == b.Str {
			return true
		}
		x, err1 := strconv.ParseFloat(a.Str, 64)
		y, err2 := strconv.ParseFloat(b.Str, 64)
		return err1 == nil && err2 == nil && x == y
	case Array:
		if len(a.Elems) != len(b.Elems) {
			return false
		}
		for i := range a.Elems {
			if !Equal(a.Elems[i], b.Elems[i]) {
				return false
			}
		}
		return true
	}
	if len(a.Keys) != len(b.Keys) {
		return false
	}
	for i, k := range a.Keys {
		bv, ok := b.Member(k)
		if !ok || !Equal(a.Vals[i], bv) {
			return false
		}
	}
	return true
}

// Truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

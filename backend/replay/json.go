package replay

import (
	"bytes"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Documents are decoded by strictjson into a strictjson.Node tree. Objects
// keep their own members in document order and nothing else: there is no
// prototype, so a key such as "__proto__", "constructor" or "toString" is
// an ordinary member name that exists only when the document holds it.
// Duplicate member names are reported and only the first is kept.

// jsonOptions are the strictjson options of a replay document or body with
// the given limits (the root is at depth 1; values counts scalars and
// containers, not member names).
func jsonOptions(depth, values int) strictjson.Options {
	return strictjson.Options{
		MaxDepth:  depth,
		MaxValues: values,
		Wording: strictjson.Wording{
			EOF:       "the document ends before the JSON value is complete",
			Trailing:  "data follows the JSON value at byte offset %d",
			Duplicate: "the member name appears more than once in this object",
			Number:    "the number is outside the range of an IEEE-754 double",
		},
	}
}

// follow follows path from v: a string step selects an object member (own
// members only), an index step selects an array element. A step of the
// wrong kind (an index into an object, a key into an array) never matches;
// nothing is coerced.
func follow(v *strictjson.Node, path []PathStep) (*strictjson.Node, bool) {
	cur := v
	for _, s := range path {
		switch {
		case s.IsIndex:
			if cur.Kind != strictjson.Array || s.Index < 0 || s.Index >= len(cur.Elems) {
				return nil, false
			}
			cur = cur.Elems[s.Index]
		default:
			next, ok := cur.Member(s.Key)
			if !ok {
				return nil, false
			}
			cur = next
		}
	}
	return cur, true
}

// decodeJSON decodes data, which must be valid UTF-8 (no byte order mark)
// holding exactly one JSON value and nothing but whitespace after it.
// Duplicate member names are reported at their path and decoding goes on;
// syntax errors and exceeded limits stop it. It returns nil when the
// document is malformed. root is the path of the document ("$").
func decodeJSON(data []byte, root string, opt strictjson.Options, issues *strictjson.Collector) *strictjson.Node {
	if bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		issues.Add(root, CodeInvalidJSON, "the document starts with a byte order mark")
		return nil
	}
	if !utf8.Valid(data) {
		issues.Add(root, CodeInvalidUTF8, "the document is not valid UTF-8")
		return nil
	}
	return strictjson.Decode(data, root, opt, issues)
}

// parseBody decodes an event body as JSON for request_json and
// websocket_json sources. It reports nothing: a body that is not JSON
// simply resolves no path.
func parseBody(s string) (*strictjson.Node, bool) {
	l := strictjson.Collector{Max: 1}
	v := decodeJSON([]byte(s), "$", jsonOptions(MaxBodyDepth, MaxBodyValues), &l)
	return v, v != nil && len(l.List) == 0
}

// keyPath is the path step for an object member (see strictjson.KeyPath).
func keyPath(key string) string { return strictjson.KeyPath(key) }

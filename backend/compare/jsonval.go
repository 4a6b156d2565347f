package compare

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// JSON values in this package are what encoding/json decodes into any with
// UseNumber: nil, bool, string, json.Number, []any and map[string]any.

// decodeJSON decodes exactly one JSON value from raw (see jsonParser).
func decodeJSON(raw string) (any, error) { return parseJSON(raw) }

// equalJSON reports whether a and b are the same JSON value under RFC 8785
// canonicalization: member order is irrelevant and numbers compare as
// IEEE-754 doubles (1, 1.0 and 1e0 are equal).
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, ex := strconv.ParseFloat(string(x), 64)
		fy, ey := strconv.ParseFloat(string(y), 64)
		return ex == nil && ey == nil && fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalJSON(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// canonKey writes a deterministic encoding of v in which two values have
// the same key exactly when equalJSON holds. Top-level object members
// named in skip are left out (skip may be nil).
func canonKey(v any, skip map[string]bool) string {
	var b strings.Builder
	writeKey(&b, v, skip)
	return b.String()
}

// writeKey writes the key of v: strings and member names length-prefixed
// (so no escaping is needed), numbers in their shortest float64 form.
func writeKey(b *strings.Builder, v any, skip map[string]bool) {
	switch x := v.(type) {
	case nil:
		b.WriteByte('n')
	case bool:
		if x {
			b.WriteByte('t')
		} else {
			b.WriteByte('f')
		}
	case string:
		writeKeyString(b, x)
	case json.Number:
		b.WriteByte('#')
		if plainInt(string(x)) {
			b.WriteString(string(x))
		} else if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			if f == math.Trunc(f) && math.Abs(f) < 1e15 {
				b.WriteString(strconv.FormatInt(int64(f), 10)) // as plainInt would; -0 → 0
			} else {
				b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			}
		} else {
			b.WriteString(string(x))
		}
		b.WriteByte(';')
	case []any:
		b.WriteByte('[')
		for _, e := range x {
			writeKey(b, e, nil)
		}
		b.WriteByte(']')
	case map[string]any:
		var small [16]string
		keys := small[:0]
		for k := range x {
			if !skip[k] {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for _, k := range keys {
			writeKeyString(b, k)
			writeKey(b, x[k], nil)
		}
		b.WriteByte('}')
	default:
		b.WriteByte('?')
	}
}

func writeKeyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}

// plainInt reports whether s is a non-negative integer literal of at most
// 15 digits without leading zeros: its shortest float64 form is itself.
func plainInt(s string) bool {
	if len(s) == 0 || len(s) > 15 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// maxSafeInt is 2^53: integers up to it are exact as IEEE-754 doubles.
const maxSafeInt = 1 << 53

// integer returns v as an integer when it is a JSON number with an
// integral value within ±2^53.
func integer(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, i >= -maxSafeInt && i <= maxSafeInt
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > maxSafeInt {
		return 0, false
	}
	return int64(f), true
}

// kindName names the JSON type of v.
func kindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "an unknown value"
}

// keyPath and indexPath are the JSON path steps of a member and of an
// array element (strictjson's one path syntax).
func keyPath(key string) string { return strictjson.KeyPath(key) }

func indexPath(path string, i int) string { return path + strictjson.IndexPath(i) }

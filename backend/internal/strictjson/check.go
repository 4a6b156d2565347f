package strictjson

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// Checker reads a decoded Node tree against a schema, reporting every
// violation with its path to Issues.
type Checker struct {
	Issues *Collector
	// ListAllowed makes unknown-field messages list the allowed names.
	ListAllowed bool
}

// Members maps the member names of a checked object to their (first)
// values.
type Members map[string]*Node

// Add records an issue.
func (c *Checker) Add(path, code, format string, args ...any) {
	c.Issues.Add(path, code, format, args...)
}

// Object checks that n is an object whose member names are all in allowed
// and returns its members (nil when n is not an object) and whether every
// member was allowed. Duplicate names have already been reported by
// Decode; the first value is kept.
func (c *Checker) Object(n *Node, path string, allowed ...string) (Members, bool) {
	if n.Kind != Object {
		c.Add(path, CodeWrongType, "must be an object, not %s", n.Kind)
		return nil, false
	}
	m := make(Members, len(n.Keys))
	ok := true
	for i, k := range n.Keys {
		if !slices.Contains(allowed, k) {
			if c.ListAllowed {
				c.Add(path+KeyPath(k), CodeUnknownField, "unknown field %q; allowed: %s", Truncate(k, 64), strings.Join(allowed, ", "))
			} else {
				c.Add(path+KeyPath(k), CodeUnknownField, "unknown field %q", Truncate(k, 64))
			}
			ok = false
			continue
		}
		if _, dup := m[k]; !dup {
			m[k] = n.Vals[i]
		}
	}
	return m, ok
}

// Required returns member key of m, reporting it missing when absent.
func (c *Checker) Required(m Members, path, key string) (*Node, bool) {
	v, ok := m[key]
	if !ok {
		c.Add(path+"."+key, CodeMissingField, "required field is missing")
	}
	return v, ok
}

// Integer reads an integral number within [min, max]; any number with an
// integral value is accepted (5.0 is 5).
func (c *Checker) Integer(n *Node, path string, min, max int) (int, bool) {
	if n.Kind != Number {
		c.Add(path, CodeWrongType, "must be an integer, not %s", n.Kind)
		return 0, false
	}
	f, _ := strconv.ParseFloat(n.Str, 64) // ±Inf on overflow: out of range below
	if !math.IsInf(f, 0) && f != math.Trunc(f) {
		c.Add(path, CodeNotInteger, "must be an integer, not %s", Truncate(n.Str, 40))
		return 0, false
	}
	if f < float64(min) || f > float64(max) {
		c.Add(path, CodeOutOfRange, "%s is outside %d–%d", Truncate(n.Str, 40), min, max)
		return 0, false
	}
	return int(f), true
}

// IntField reads optional integer member key of m, defaulting to def.
func (c *Checker) IntField(m Members, path, key string, min, max, def int) (int, bool) {
	v, ok := m[key]
	if !ok {
		return def, true
	}
	return c.Integer(v, path+"."+key, min, max)
}

// ReqInt reads required integer member key of m.
func (c *Checker) ReqInt(m Members, path, key string, min, max int) (int, bool) {
	v, ok := c.Required(m, path, key)
	if !ok {
		return 0, false
	}
	return c.Integer(v, path+"."+key, min, max)
}

// BoolField reads optional boolean member key of m, defaulting to def, and
// reports whether it was acceptable.
func (c *Checker) BoolField(m Members, path, key string, def bool) (bool, bool) {
	v, ok := m[key]
	if !ok {
		return def, true
	}
	if v.Kind != Bool {
		c.Add(path+"."+key, CodeWrongType, "must be true or false, not %s", v.Kind)
		return def, false
	}
	return v.Bool, true
}

// Str reads a string.
func (c *Checker) Str(n *Node, path string) (string, bool) {
	if n.Kind != String {
		c.Add(path, CodeWrongType, "must be a string, not %s", n.Kind)
		return "", false
	}
	return n.Str, true
}

// Enum reads a string that must be one of allowed (CodeInvalidValue
// otherwise, naming them).
func (c *Checker) Enum(n *Node, path string, allowed ...string) (string, bool) {
	s, ok := c.Str(n, path)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		c.Add(path, CodeInvalidValue, "%q is not one of %s", Truncate(s, 64), strings.Join(allowed, ", "))
		return "", false
	}
	return s, true
}

// Variant reads the discriminator member key of the union object n, which
// must be a string in allowed. An n that is not an object, a missing key,
// a key that is not a string and a string outside allowed
// (CodeInvalidVariant, naming them) are each reported, before any other
// member of n is looked at; the first member named key decides.
func (c *Checker) Variant(n *Node, path, key string, allowed ...string) (string, bool) {
	if n.Kind != Object {
		c.Add(path, CodeWrongType, "must be an object, not %s", n.Kind)
		return "", false
	}
	v, ok := n.Member(key)
	if !ok {
		c.Add(path+"."+key, CodeMissingField, "required field is missing")
		return "", false
	}
	s, ok := c.Str(v, path+"."+key)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		c.Add(path+"."+key, CodeInvalidVariant, "%q is not one of %s", Truncate(s, 64), strings.Join(allowed, ", "))
		return "", false
	}
	return s, true
}

// ReqStr reads required string member key of m.
func (c *Checker) ReqStr(m Members, path, key string) (string, bool) {
	v, ok := c.Required(m, path, key)
	if !ok {
		return "", false
	}
	return c.Str(v, path+"."+key)
}

// Array reads an array of min to max elements.
func (c *Checker) Array(n *Node, path string, min, max int) ([]*Node, bool) {
	if n.Kind != Array {
		c.Add(path, CodeWrongType, "must be an array, not %s", n.Kind)
		return nil, false
	}
	switch {
	case len(n.Elems) > max:
		c.Add(path, CodeTooManyEntries, "has %d entries; at most %d are allowed", len(n.Elems), max)
		return nil, false
	case len(n.Elems) < min:
		c.Add(path, CodeTooFewEntries, "has %d entries; at least %d are required", len(n.Elems), min)
		return nil, false
	}
	return n.Elems, true
}

// List reads array member key of m (required when req or min > 0, else
// default empty), calling each for every element with its path. It reports
// whether the array and every element were acceptable.
func (c *Checker) List(m Members, path, key string, req bool, min, max int, each func(i int, e *Node, at string) bool) bool {
	v, ok := m[key]
	if !ok {
		if req || min > 0 {
			c.Add(path+"."+key, CodeMissingField, "required field is missing")
			return false
		}
		return true
	}
	elems, ok := c.Array(v, path+"."+key, min, max)
	if !ok {
		return false
	}
	all := true
	for i, e := range elems {
		if !each(i, e, path+"."+key+"["+strconv.Itoa(i)+"]") {
			all = false
		}
	}
	return all
}

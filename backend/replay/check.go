package replay

import (
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// checker reads a decoded value against the schema, reporting every
// violation with its path.
type checker struct{ strictjson.Checker }

// newChecker returns a checker reporting to issues; unknown-field messages
// list the allowed names.
func newChecker(issues *strictjson.Collector) *checker {
	return &checker{strictjson.Checker{Issues: issues, ListAllowed: true}}
}

// text reads a string of at most max characters without NUL, reporting
// neither its content (it may be a secret) nor anything beyond its length.
func (c *checker) text(v *strictjson.Node, path string, max int) (string, bool) {
	s, ok := c.Str(v, path)
	if !ok {
		return "", false
	}
	if n := utf8.RuneCountInString(s); n > max {
		c.Add(path, CodeInvalidLength, "has %d characters; at most %d are allowed", n, max)
		return "", false
	}
	if strings.IndexByte(s, 0) >= 0 {
		c.Add(path, CodeInvalidValue, "must not contain a NUL character")
		return "", false
	}
	return s, true
}

// name reads a string that must satisfy match, described by pattern.
func (c *checker) name(v *strictjson.Node, path, what, pattern string, match func(string) bool) (string, bool) {
	s, ok := c.Str(v, path)
	if !ok {
		return "", false
	}
	if !match(s) {
		c.Add(path, CodeInvalidName, "%q is not a valid %s (%s)", strictjson.Truncate(s, 64), what, pattern)
		return "", false
	}
	return s, true
}

// member reads the required member key of m with read, at path.key; a
// missing member is reported and yields the zero value and false. It is the
// one place the "required, then read" step is written, so a field reader
// stays one line.
func member[T any](c *checker, m strictjson.Members, path, key string, read func(v *strictjson.Node, path string) (T, bool)) (T, bool) {
	v, has := c.Required(m, path, key)
	if !has {
		var zero T
		return zero, false
	}
	return read(v, path+"."+key)
}

// list reads the array member key of m (min to max elements; required,
// or absent as none) with read, appending every element read to out, even
// a refused one, so that indexes stay those of the document; it reports
// whether every element was accepted.
func list[T any](c *checker, m strictjson.Members, path, key string, required bool, min, max int, out *[]T, read func(v *strictjson.Node, path string) (T, bool)) bool {
	return c.List(m, path, key, required, min, max, func(_ int, e *strictjson.Node, at string) bool {
		v, ok := read(e, at)
		*out = append(*out, v)
		return ok
	})
}

// named is name as a member reader (see member).
func (c *checker) named(what, pattern string, match func(string) bool) func(*strictjson.Node, string) (string, bool) {
	return func(v *strictjson.Node, path string) (string, bool) { return c.name(v, path, what, pattern, match) }
}

// headers reads optional header map member key of m: at most MaxHeaders
// members, names tchar tokens unique without regard to case, values text
// without CR, LF or NUL. Names are returned in lower case.
func (c *checker) headers(m strictjson.Members, path, key string) (map[string]string, bool) {
	out := map[string]string{}
	v, ok := m[key]
	if !ok {
		return out, true
	}
	at := path + "." + key
	if v.Kind != strictjson.Object {
		c.Add(at, CodeWrongType, "must be an object of header names to values, not %s", v.Kind)
		return nil, false
	}
	if len(v.Keys) > MaxHeaders {
		c.Add(at, CodeTooManyEntries, "has %d headers; at most %d are allowed", len(v.Keys), MaxHeaders)
		return nil, false
	}
	good := true
	for i, k := range v.Keys {
		kp := at + keyPath(k)
		if !isToken(k) || len(k) > MaxHeaderNameChars {
			c.Add(kp, CodeInvalidName, "%q is not a valid header name (1–128 RFC 9110 token characters)", strictjson.Truncate(k, 64))
			good = false
			continue
		}
		lk := strings.ToLower(k)
		if _, dup := out[lk]; dup {
			c.Add(kp, CodeDuplicateEntry, "header %q appears more than once (names are case-insensitive)", lk)
			good = false
			continue
		}
		s, ok := c.text(v.Vals[i], kp, MaxHeaderValueChars)
		if !ok {
			good = false
			continue
		}
		if strings.ContainsAny(s, "\r\n") {
			c.Add(kp, CodeInvalidValue, "a header value must not contain CR or LF")
			good = false
			continue
		}
		out[lk] = s
	}
	return out, good
}

// isToken reports whether s is a non-empty RFC 9110 token.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if strictjson.IsAlnum(b) || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0 {
			continue
		}
		return false
	}
	return true
}

// isName matches ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ (state names,
// transition ids, connection ids).
func isName(s string) bool { return strictjson.IsName(s, MaxNameChars, "._-") }

// isVariable matches ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
func isVariable(s string) bool {
	if s == "" || len(s) > MaxNameChars || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strictjson.IsAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

// isMethod matches ^[A-Z][A-Z_-]{0,31}$.
func isMethod(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if (s[i] < 'A' || s[i] > 'Z') && s[i] != '_' && s[i] != '-' {
			return false
		}
	}
	return true
}

// isPath accepts a request target: "/" followed by visible ASCII, at most
// MaxPathChars bytes.
func isPath(s string) bool {
	if s == "" || s[0] != '/' || len(s) > MaxPathChars {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

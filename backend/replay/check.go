package replay

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// checker reads a decoded value against the schema, reporting every
// violation with its path.
type checker struct{ issues *issueList }

func (c *checker) add(path, code, format string, args ...any) {
	c.issues.add(path, code, format, args...)
}

// members maps the member names of a checked object to their values. It is
// built from the object's own members only.
type members map[string]*value

// object checks that v is an object whose member names are all in allowed
// and returns its members.
func (c *checker) object(v *value, path string, allowed ...string) (members, bool) {
	if v.kind != kindObject {
		c.add(path, CodeWrongType, "must be an object, not %s", v.kind)
		return nil, false
	}
	m := make(members, len(v.keys))
	ok := true
	for i, k := range v.keys {
		if !slices.Contains(allowed, k) {
			c.add(path+keyPath(k), CodeUnknownField, "unknown field %q; allowed: %s", truncate(k, 64), strings.Join(allowed, ", "))
			ok = false
			continue
		}
		m[k] = v.vals[i]
	}
	return m, ok
}

// required returns member key of m, reporting it missing when absent.
func (c *checker) required(m members, path, key string) (*value, bool) {
	v, ok := m[key]
	if !ok {
		c.add(path+"."+key, CodeMissingField, "required field is missing")
	}
	return v, ok
}

// integer reads an integral number within [min, max].
func (c *checker) integer(v *value, path string, min, max int) (int, bool) {
	if v.kind != kindNumber {
		c.add(path, CodeWrongType, "must be an integer, not %s", v.kind)
		return 0, false
	}
	f, _ := strconv.ParseFloat(v.str, 64)
	if !math.IsInf(f, 0) && f != math.Trunc(f) {
		c.add(path, CodeNotInteger, "must be an integer, not %s", truncate(v.str, 40))
		return 0, false
	}
	if f < float64(min) || f > float64(max) {
		c.add(path, CodeOutOfRange, "%s is outside %d–%d", truncate(v.str, 40), min, max)
		return 0, false
	}
	return int(f), true
}

// intField reads optional integer member key of m, defaulting to def.
func (c *checker) intField(m members, path, key string, min, max, def int) (int, bool) {
	v, ok := m[key]
	if !ok {
		return def, true
	}
	return c.integer(v, path+"."+key, min, max)
}

// reqInt reads required integer member key of m.
func (c *checker) reqInt(m members, path, key string, min, max int) (int, bool) {
	v, ok := c.required(m, path, key)
	if !ok {
		return 0, false
	}
	return c.integer(v, path+"."+key, min, max)
}

// boolField reads optional boolean member key of m, defaulting to def.
func (c *checker) boolField(m members, path, key string, def bool) (bool, bool) {
	v, ok := m[key]
	if !ok {
		return def, true
	}
	if v.kind != kindBool {
		c.add(path+"."+key, CodeWrongType, "must be true or false, not %s", v.kind)
		return def, false
	}
	return v.b, true
}

// str reads a string.
func (c *checker) str(v *value, path string) (string, bool) {
	if v.kind != kindString {
		c.add(path, CodeWrongType, "must be a string, not %s", v.kind)
		return "", false
	}
	return v.str, true
}

// reqStr reads required string member key of m.
func (c *checker) reqStr(m members, path, key string) (string, bool) {
	v, ok := c.required(m, path, key)
	if !ok {
		return "", false
	}
	return c.str(v, path+"."+key)
}

// text reads a string of at most max characters without NUL, reporting
// neither its content (it may be a secret) nor anything beyond its length.
func (c *checker) text(v *value, path string, max int) (string, bool) {
	s, ok := c.str(v, path)
	if !ok {
		return "", false
	}
	if n := utf8.RuneCountInString(s); n > max {
		c.add(path, CodeInvalidLength, "has %d characters; at most %d are allowed", n, max)
		return "", false
	}
	if strings.IndexByte(s, 0) >= 0 {
		c.add(path, CodeInvalidValue, "must not contain a NUL character")
		return "", false
	}
	return s, true
}

// name reads a string that must satisfy match, described by pattern.
func (c *checker) name(v *value, path, what, pattern string, match func(string) bool) (string, bool) {
	s, ok := c.str(v, path)
	if !ok {
		return "", false
	}
	if !match(s) {
		c.add(path, CodeInvalidName, "%q is not a valid %s (%s)", truncate(s, 64), what, pattern)
		return "", false
	}
	return s, true
}

// variant reads the discriminator member key of m, which must be one of
// allowed.
func (c *checker) variant(m members, path, key string, allowed ...string) (string, bool) {
	s, ok := c.reqStr(m, path, key)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		c.add(path+"."+key, CodeInvalidVariant, "%q is not one of %s", truncate(s, 64), strings.Join(allowed, ", "))
		return "", false
	}
	return s, true
}

// array reads an array of min to max elements.
func (c *checker) array(v *value, path string, min, max int) ([]*value, bool) {
	if v.kind != kindArray {
		c.add(path, CodeWrongType, "must be an array, not %s", v.kind)
		return nil, false
	}
	switch {
	case len(v.elems) > max:
		c.add(path, CodeTooManyEntries, "has %d entries; at most %d are allowed", len(v.elems), max)
		return nil, false
	case len(v.elems) < min:
		c.add(path, CodeTooFewEntries, "has %d entries; at least %d are required", len(v.elems), min)
		return nil, false
	}
	return v.elems, true
}

// list reads array member key of m (required when req, else default
// empty), calling each for every element with its path. It reports whether
// the array and every element were acceptable.
func (c *checker) list(m members, path, key string, req bool, min, max int, each func(i int, e *value, at string) bool) bool {
	v, ok := m[key]
	if !ok {
		if req || min > 0 {
			c.add(path+"."+key, CodeMissingField, "required field is missing")
			return false
		}
		return true
	}
	elems, ok := c.array(v, path+"."+key, min, max)
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

// headers reads optional header map member key of m: at most MaxHeaders
// members, names tchar tokens unique without regard to case, values text
// without CR, LF or NUL. Names are returned in lower case.
func (c *checker) headers(m members, path, key string) (map[string]string, bool) {
	out := map[string]string{}
	v, ok := m[key]
	if !ok {
		return out, true
	}
	at := path + "." + key
	if v.kind != kindObject {
		c.add(at, CodeWrongType, "must be an object of header names to values, not %s", v.kind)
		return nil, false
	}
	if len(v.keys) > MaxHeaders {
		c.add(at, CodeTooManyEntries, "has %d headers; at most %d are allowed", len(v.keys), MaxHeaders)
		return nil, false
	}
	good := true
	for i, k := range v.keys {
		kp := at + keyPath(k)
		if !isToken(k) || len(k) > MaxHeaderNameChars {
			c.add(kp, CodeInvalidName, "%q is not a valid header name (1–128 RFC 9110 token characters)", truncate(k, 64))
			good = false
			continue
		}
		lk := strings.ToLower(k)
		if _, dup := out[lk]; dup {
			c.add(kp, CodeDuplicateEntry, "header %q appears more than once (names are case-insensitive)", lk)
			good = false
			continue
		}
		s, ok := c.text(v.vals[i], kp, MaxHeaderValueChars)
		if !ok {
			good = false
			continue
		}
		if strings.ContainsAny(s, "\r\n") {
			c.add(kp, CodeInvalidValue, "a header value must not contain CR or LF")
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
		if isAlnum(b) || strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0 {
			continue
		}
		return false
	}
	return true
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// isName matches ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ (state names,
// transition ids, connection ids).
func isName(s string) bool {
	if s == "" || len(s) > MaxNameChars || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-' {
			return false
		}
	}
	return true
}

// isVariable matches ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
func isVariable(s string) bool {
	if s == "" || len(s) > MaxNameChars || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' {
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

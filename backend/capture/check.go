package capture

import (
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// checker validates a decoded node tree against the scenario schema,
// reporting every violation with its path.
type checker struct{ issues *issueList }

func (c *checker) add(path, code, format string, args ...any) {
	c.issues.add(path, code, format, args...)
}

// members is the first value of each member of a checked object.
type members map[string]*node

// object checks that n is an object whose member names are all in allowed
// and returns its members (the decoder has already reported duplicates).
func (c *checker) object(n *node, path string, allowed ...string) (members, bool) {
	if n.kind != 'o' {
		c.add(path, CodeWrongType, "must be an object, not %s", kindName(n.kind))
		return nil, false
	}
	m := make(members, len(n.keys))
	for i, k := range n.keys {
		if !slices.Contains(allowed, k) {
			c.add(path+keyPath(k), CodeUnknownField, "unknown field %q", truncate(k, 64))
			continue
		}
		if _, dup := m[k]; !dup {
			m[k] = n.vals[i]
		}
	}
	return m, true
}

// required returns member key of m, reporting it missing when absent.
func (c *checker) required(m members, path, key string) (*node, bool) {
	v, ok := m[key]
	if !ok {
		c.add(path+"."+key, CodeMissingField, "required field is missing")
	}
	return v, ok
}

// integer reads an integral number within [min, max].
func (c *checker) integer(n *node, path string, min, max int) (int, bool) {
	if n.kind != 'n' {
		c.add(path, CodeWrongType, "must be an integer, not %s", kindName(n.kind))
		return 0, false
	}
	f, _ := strconv.ParseFloat(n.num, 64) // ±Inf on overflow: out of range below
	if !math.IsInf(f, 0) && f != math.Trunc(f) {
		c.add(path, CodeNotInteger, "must be an integer, not %s", truncate(n.num, 40))
		return 0, false
	}
	if f < float64(min) || f > float64(max) {
		c.add(path, CodeOutOfRange, "%s is outside %d–%d", truncate(n.num, 40), min, max)
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
func (c *checker) boolField(m members, path, key string, def bool) bool {
	v, ok := m[key]
	if !ok {
		return def
	}
	if v.kind != 'b' {
		c.add(path+"."+key, CodeWrongType, "must be true or false, not %s", kindName(v.kind))
		return def
	}
	return v.b
}

// str reads a string.
func (c *checker) str(n *node, path string) (string, bool) {
	if n.kind != 's' {
		c.add(path, CodeWrongType, "must be a string, not %s", kindName(n.kind))
		return "", false
	}
	return n.str, true
}

// reqStr reads required string member key of m.
func (c *checker) reqStr(m members, path, key string) (string, bool) {
	v, ok := c.required(m, path, key)
	if !ok {
		return "", false
	}
	return c.str(v, path+"."+key)
}

// noNUL reports strings that cannot reach an exec call or a file name.
func (c *checker) noNUL(s, path string) bool {
	if strings.IndexByte(s, 0) >= 0 {
		c.add(path, CodeInvalidValue, "must not contain a NUL character")
		return false
	}
	return true
}

// length checks that s has between min and max characters (code points).
func (c *checker) length(s, path string, min, max int) bool {
	if n := utf8.RuneCountInString(s); n < min || n > max {
		c.add(path, CodeInvalidLength, "has %d characters; %d–%d are allowed", n, min, max)
		return false
	}
	return true
}

// enum reads a string that must be one of allowed.
func (c *checker) enum(n *node, path string, allowed ...string) (string, bool) {
	s, ok := c.str(n, path)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		c.add(path, CodeInvalidValue, "%q is not one of %s", truncate(s, 64), strings.Join(allowed, ", "))
		return "", false
	}
	return s, true
}

// array reads an array of at most max elements (min elements at least).
func (c *checker) array(n *node, path string, min, max int) ([]*node, bool) {
	if n.kind != 'a' {
		c.add(path, CodeWrongType, "must be an array, not %s", kindName(n.kind))
		return nil, false
	}
	switch {
	case len(n.elems) > max:
		c.add(path, CodeTooManyEntries, "has %d entries; at most %d are allowed", len(n.elems), max)
		return nil, false
	case len(n.elems) < min:
		c.add(path, CodeTooFewEntries, "has %d entries; at least %d are required", len(n.elems), min)
		return nil, false
	}
	return n.elems, true
}

// listField reads optional array member key of m (default empty), calling
// each for every element with its path. It reports whether the array itself
// was acceptable.
func (c *checker) listField(m members, path, key string, min, max int, each func(i int, e *node, at string)) bool {
	v, ok := m[key]
	if !ok {
		if min > 0 {
			c.add(path+"."+key, CodeMissingField, "required field is missing")
			return false
		}
		return true
	}
	elems, ok := c.array(v, path+"."+key, min, max)
	if !ok {
		return false
	}
	for i, e := range elems {
		each(i, e, path+"."+key+"["+strconv.Itoa(i)+"]")
	}
	return true
}

// stringList reads optional member key of m as a string array (default
// empty) whose entries pass check and are unique.
func (c *checker) stringList(m members, path, key string, max int, check func(s, at string) bool) []string {
	out := []string{}
	seen := map[string]int{}
	c.listField(m, path, key, 0, max, func(i int, e *node, at string) {
		s, ok := c.str(e, at)
		if !ok || !check(s, at) {
			return
		}
		if first, dup := seen[s]; dup {
			c.add(at, CodeDuplicateEntry, "duplicates entry %d", first)
			return
		}
		seen[s] = i
		out = append(out, s)
	})
	return out
}

// absPath checks an absolute path.
func (c *checker) absPath(s, path string) bool {
	if !c.noNUL(s, path) {
		return false
	}
	if !filepath.IsAbs(s) {
		c.add(path, CodeRelativePath, "%q is not an absolute path", truncate(s, 200))
		return false
	}
	return true
}

// reservedEnv are the environment names Gatehouse sets itself.
func reservedEnv(name string) bool {
	switch name {
	case "HOME", "TERM", MarkerVariable, "GATEHOUSE_REPLAY_HTTP_URL",
		"GATEHOUSE_REPLAY_WEBSOCKET_URL", "GATEHOUSE_SHIM_LEDGER_URL":
		return true
	}
	return false
}

// envName checks ^[A-Za-z_][A-Za-z0-9_]*$ and refuses reserved names.
func (c *checker) envName(s, path string) bool {
	if !isEnvName(s) {
		c.add(path, CodeInvalidName, "%q is not an environment variable name (^[A-Za-z_][A-Za-z0-9_]*$)", truncate(s, 64))
		return false
	}
	if reservedEnv(s) {
		c.add(path, CodeReservedName, "%s is set by Gatehouse and cannot be requested", s)
		return false
	}
	return true
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// isEnvName matches ^[A-Za-z_][A-Za-z0-9_]*$.
func isEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

// isName matches ^[A-Za-z0-9][A-Za-z0-9<extra>]{0,max-1}$.
func isName(s string, max int, extra string) bool {
	if s == "" || len(s) > max || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isAlnum(s[i]) && strings.IndexByte(extra, s[i]) < 0 {
			return false
		}
	}
	return true
}

// signalEnum checks a signal name a scenario may use.
func (c *checker) signalEnum(n *node, path string) (string, bool) {
	return c.enum(n, path, "SIGINT", "SIGTERM", "SIGKILL")
}

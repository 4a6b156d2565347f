package capture

import (
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// checker validates a decoded node tree against the scenario schema,
// reporting every violation with its path.
type checker struct{ strictjson.Checker }

// object checks that n is an object whose member names are all in allowed
// and returns its members; unknown members are reported but do not make
// the object unacceptable.
func (c *checker) object(n *strictjson.Node, path string, allowed ...string) (strictjson.Members, bool) {
	m, _ := c.Object(n, path, allowed...)
	return m, m != nil
}

// boolField reads optional boolean member key of m, defaulting to def.
func (c *checker) boolField(m strictjson.Members, path, key string, def bool) bool {
	b, _ := c.BoolField(m, path, key, def)
	return b
}

// listField reads optional array member key of m (default empty), calling
// each for every element with its path. It reports whether the array itself
// was acceptable.
func (c *checker) listField(m strictjson.Members, path, key string, min, max int, each func(i int, e *strictjson.Node, at string)) bool {
	return c.List(m, path, key, false, min, max, func(i int, e *strictjson.Node, at string) bool {
		each(i, e, at)
		return true
	})
}

// noNUL reports strings that cannot reach an exec call or a file name.
func (c *checker) noNUL(s, path string) bool {
	if strings.IndexByte(s, 0) >= 0 {
		c.Add(path, CodeInvalidValue, "must not contain a NUL character")
		return false
	}
	return true
}

// length checks that s has between min and max characters (code points).
func (c *checker) length(s, path string, min, max int) bool {
	if n := utf8.RuneCountInString(s); n < min || n > max {
		c.Add(path, CodeInvalidLength, "has %d characters; %d–%d are allowed", n, min, max)
		return false
	}
	return true
}

// stringList reads optional member key of m as a string array (default
// empty) whose entries pass check and are unique.
func (c *checker) stringList(m strictjson.Members, path, key string, max int, check func(s, at string) bool) []string {
	out := []string{}
	seen := map[string]int{}
	c.listField(m, path, key, 0, max, func(i int, e *strictjson.Node, at string) {
		s, ok := c.Str(e, at)
		if !ok || !check(s, at) {
			return
		}
		if first, dup := seen[s]; dup {
			c.Add(at, CodeDuplicateEntry, "duplicates entry %d", first)
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
		c.Add(path, CodeRelativePath, "%q is not an absolute path", strictjson.Truncate(s, 200))
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
		c.Add(path, CodeInvalidName, "%q is not an environment variable name (^[A-Za-z_][A-Za-z0-9_]*$)", strictjson.Truncate(s, 64))
		return false
	}
	if reservedEnv(s) {
		c.Add(path, CodeReservedName, "%s is set by Gatehouse and cannot be requested", s)
		return false
	}
	return true
}

// isEnvName matches ^[A-Za-z_][A-Za-z0-9_]*$.
func isEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strictjson.IsAlnum(s[i]) && s[i] != '_' {
			return false
		}
	}
	return true
}

// signalEnum checks a signal name a scenario may use.
func (c *checker) signalEnum(n *strictjson.Node, path string) (string, bool) {
	return c.Enum(n, path, "SIGINT", "SIGTERM", "SIGKILL")
}

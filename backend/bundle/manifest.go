package bundle

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Manifest bounds from the execution.json contract.
const (
	ManifestFile        = "execution.json"
	MaxManifestBytes    = 64 << 10
	MaxFiles            = 64
	MaxFileBytes        = 1 << 20
	MaxTotalFileBytes   = 4 << 20
	MinTimeoutMs        = 1000
	MaxTimeoutMs        = 120000
	MinOutputBytes      = 1
	MaxOutputBytesLimit = 262144
	maxPathBytes        = 1024
	maxSegmentBytes     = 255
)

// Manifest is a checked execution.json (schema version 1). A Manifest
// returned without issues satisfies every bound of the contract.
type Manifest struct {
	SchemaVersion  int      `json:"schemaVersion"`
	Entrypoint     string   `json:"entrypoint"`
	Files          []string `json:"files"`
	InputSchema    *Value   `json:"inputSchema"`
	OutputSchema   *Value   `json:"outputSchema"`
	TimeoutMs      int      `json:"timeoutMs"`
	MaxOutputBytes int      `json:"maxOutputBytes"`
}

// Runtime names how an entrypoint is run.
type Runtime string

// Supported runtimes.
const (
	RuntimeESM Runtime = "node-esm"
	RuntimeCJS Runtime = "node-cjs"
)

// Runtime reports the runtime of the entrypoint (.mjs or .cjs).
func (m *Manifest) Runtime() Runtime {
	if strings.HasSuffix(m.Entrypoint, ".cjs") {
		return RuntimeCJS
	}
	return RuntimeESM
}

var manifestFields = []string{"schemaVersion", "entrypoint", "files", "inputSchema", "outputSchema", "timeoutMs", "maxOutputBytes"}

// unsupportedRuntimes are entrypoint extensions people commonly try; they
// are reported as unsupported runtimes rather than as malformed paths.
var unsupportedRuntimes = map[string]string{
	".js": "plain .js (module type depends on package.json; use .mjs or .cjs)",
	".ts": "TypeScript", ".mts": "TypeScript", ".cts": "TypeScript",
	".py": "Python", ".sh": "shell", ".bash": "shell",
}

// ParseManifest checks execution.json bytes strictly. It returns the
// manifest only when there are no issues; otherwise the issues (at most
// MaxIssues, each with its JSON path) and, separately, any unsupported
// runtimes named by the entrypoint. Unknown fields, other schema versions
// and out-of-range values are errors, never ignored or clamped.
func ParseManifest(data []byte) (m *Manifest, issues []Issue, unsupported []string) {
	if len(data) > MaxManifestBytes {
		return nil, []Issue{{Code: "manifest_too_large", Path: "$", Message: fmt.Sprintf("%s is %d bytes; the limit is %d", ManifestFile, len(data), MaxManifestBytes)}}, nil
	}
	// The manifest wraps two schemas, each of which gets the full shared
	// limits (checked by CheckSchema); the wrapper itself adds one level and
	// a bounded number of values (64 files plus scalars).
	root, iss := parseJSON(data, MaxDepth+1, 2*MaxNodes+MaxFiles+16)
	if iss != nil {
		return nil, []Issue{*iss}, nil
	}
	if root.Kind != Object {
		return nil, []Issue{{Code: "not_object", Path: "$", Message: "execution.json must be one JSON object"}}, nil
	}
	var c collector
	for _, key := range root.Keys {
		if !contains(manifestFields, key) {
			c.add("unknown_field", JoinPath("$", key), fmt.Sprintf("unknown field %q (allowed: %s)", key, strings.Join(manifestFields, ", ")))
		}
	}
	for _, f := range manifestFields {
		if get(root, f) == nil {
			c.add("missing_field", JoinPath("$", f), fmt.Sprintf("required field %q is missing", f))
		}
	}
	m = &Manifest{}
	if v := get(root, "schemaVersion"); v != nil {
		n, ok := intValue(v)
		if !ok || n != 1 {
			c.add("unsupported_version", "$.schemaVersion", fmt.Sprintf("schemaVersion must be the integer 1, got %s", literal(v)))
		}
		m.SchemaVersion = int(n)
	}
	if v := get(root, "entrypoint"); v != nil {
		if v.Kind != String {
			c.add("wrong_type", "$.entrypoint", "entrypoint must be a string")
		} else {
			m.Entrypoint = v.Str
			if msg := checkPortablePath(v.Str); msg != "" {
				c.add("invalid_path", "$.entrypoint", msg)
			} else if ext := path.Ext(v.Str); ext != ".mjs" && ext != ".cjs" {
				if name, ok := unsupportedRuntimes[ext]; ok {
					unsupported = append(unsupported, fmt.Sprintf("%s (%s)", v.Str, name))
					c.add("unsupported_runtime", "$.entrypoint", fmt.Sprintf("%s entrypoints are not supported; only .mjs (ES module) and .cjs (CommonJS) run under Gatehouse", name))
				} else {
					c.add("unsupported_runtime", "$.entrypoint", fmt.Sprintf("entrypoint %q must end in .mjs or .cjs", v.Str))
					unsupported = append(unsupported, v.Str)
				}
			}
		}
	}
	if v := get(root, "files"); v != nil {
		m.Files = checkFiles(&c, v, m.Entrypoint)
	}
	m.TimeoutMs = checkIntRange(&c, get(root, "timeoutMs"), "$.timeoutMs", MinTimeoutMs, MaxTimeoutMs)
	m.MaxOutputBytes = checkIntRange(&c, get(root, "maxOutputBytes"), "$.maxOutputBytes", MinOutputBytes, MaxOutputBytesLimit)
	if v := get(root, "inputSchema"); v != nil {
		c.addAll(CheckSchema(v, "$.inputSchema", true))
		m.InputSchema = v
	}
	if v := get(root, "outputSchema"); v != nil {
		c.addAll(CheckSchema(v, "$.outputSchema", false))
		m.OutputSchema = v
	}
	if len(c.issues) > 0 {
		return nil, c.issues, unsupported
	}
	return m, nil, nil
}

func checkFiles(c *collector, v *Value, entrypoint string) []string {
	if v.Kind != Array {
		c.add("wrong_type", "$.files", "files must be an array of relative paths")
		return nil
	}
	if len(v.Elems) > MaxFiles {
		c.add("too_many_files", "$.files", fmt.Sprintf("files lists %d paths; the limit is %d", len(v.Elems), MaxFiles))
	}
	var files []string
	seen := map[string]int{}
	for i, it := range v.Elems {
		p := fmt.Sprintf("$.files[%d]", i)
		if it.Kind != String {
			c.add("wrong_type", p, "each file must be a string")
			continue
		}
		if msg := checkPortablePath(it.Str); msg != "" {
			c.add("invalid_path", p, msg)
			continue
		}
		if j, dup := seen[strings.ToLower(it.Str)]; dup {
			c.add("duplicate_file", p, fmt.Sprintf("%q repeats files[%d] (paths are compared case-insensitively for portability)", it.Str, j))
			continue
		}
		if it.Str == "SKILL.md" || it.Str == ManifestFile {
			c.add("reserved_file", p, fmt.Sprintf("%s is always captured and must not be listed", it.Str))
			continue
		}
		seen[strings.ToLower(it.Str)] = i
		files = append(files, it.Str)
	}
	if entrypoint != "" && !contains(files, entrypoint) {
		c.add("undeclared_entrypoint", "$.files", fmt.Sprintf("files must include the entrypoint %q", entrypoint))
	}
	return files
}

// checkPortablePath returns why p is not a portable bundle-relative path,
// or "" when it is one: slash-separated segments of letters, digits, '.',
// '_' and '-', no empty, "." or ".." segment, not absolute, no backslash.
func checkPortablePath(p string) string {
	switch {
	case p == "":
		return "path is empty"
	case len(p) > maxPathBytes:
		return fmt.Sprintf("path is longer than %d bytes", maxPathBytes)
	case strings.HasPrefix(p, "/"):
		return fmt.Sprintf("%q is absolute; paths are relative to the bundle folder", p)
	case strings.Contains(p, "\\"):
		return fmt.Sprintf("%q contains a backslash; use '/'", p)
	}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "..":
			return fmt.Sprintf("%q contains '..'", p)
		case seg == "" || seg == ".":
			return fmt.Sprintf("%q has an empty or '.' segment", p)
		case len(seg) > maxSegmentBytes:
			return fmt.Sprintf("%q has a segment longer than %d bytes", p, maxSegmentBytes)
		}
		for _, r := range seg {
			if !(r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
				return fmt.Sprintf("%q contains %q; portable paths use letters, digits, '.', '_', '-' and '/'", p, r)
			}
		}
	}
	return ""
}

// CheckPortablePath is exported for the artifact and runner packages: it
// returns nil when p is a portable bundle-relative path.
func CheckPortablePath(p string) error {
	if msg := checkPortablePath(p); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

func checkIntRange(c *collector, v *Value, p string, lo, hi int64) int {
	if v == nil {
		return 0
	}
	n, ok := intValue(v)
	if !ok {
		c.add("wrong_type", p, fmt.Sprintf("must be an integer, got %s", literal(v)))
		return 0
	}
	if n < lo || n > hi {
		c.add("out_of_range", p, fmt.Sprintf("%d is outside %d..%d (values are rejected, never clamped)", n, lo, hi))
		return 0
	}
	return int(n)
}

// intValue reads an integer written as an integer literal; 5000.0 or 5e3
// are not integer literals and are refused rather than reinterpreted.
func intValue(v *Value) (int64, bool) {
	if v.Kind != Number {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Str, 10, 64)
	return n, err == nil
}

func literal(v *Value) string {
	b, _ := v.MarshalJSON()
	if utf8.RuneCount(b) > 40 {
		return string([]rune(string(b))[:40]) + "…"
	}
	return string(b)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// collector gathers at most MaxIssues issues.
type collector struct{ issues []Issue }

func (c *collector) add(code, path, msg string) {
	if len(c.issues) < MaxIssues {
		c.issues = append(c.issues, Issue{Code: code, Path: path, Message: msg})
	}
}

func (c *collector) addAll(is []Issue) {
	for _, i := range is {
		c.add(i.Code, i.Path, i.Message)
	}
}

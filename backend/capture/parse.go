package capture

import (
	"fmt"
	"sort"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
	"github.com/gatehouse/gatehouse/backend/loopback"
)

// MarkerVariable is the environment variable that carries a capture's run
// identifier into the target's tree; scenarios cannot set it.
const MarkerVariable = "GATEHOUSE_PROCESS_RUN_ID"

// Bounds of the scenario table in docs/formats/capture-scenario.md.
const (
	MaxArguments        = 256
	MaxEnvNameLists     = 64 // inherit_environment and secret_aliases
	MaxFilesystemRoots  = 16
	MaxEvents           = 1000
	MaxCheckpoints      = 64
	MaxCommandShims     = 32
	MaxShimRoutes       = 100
	MaxShimOutputs      = 1000
	MaxShimCalls        = 100
	MaxTimeoutMS        = 300000
	MaxSettleMS         = 10000
	MaxTerminalSize     = 1000
	MaxScrollback       = 10000
	MaxLiteralChars     = 10000
	MaxOccurrence       = 1000
	MaxTimeBucketMS     = 60000
	MaxPatterns         = 32
	MaxPatternChars     = 500
	MaxReplacementChars = 100
)

// scenarioFields lists the scenario members in the order of the table,
// which is also the order in which they are checked.
func scenarioFields() []string {
	return []string{"approved", "executable", "arguments", "working_directory", "environment",
		"inherit_environment", "secret_aliases", "network_access", "filesystem_roots",
		"terminal", "events", "checkpoints", "command_shims", "timeout_ms",
		"idle_timeout_ms", "settle_ms", "limits", "normalization", "replay", "reactive",
	}
}

// ParseScenario strictly parses one scenario document (spec docs/formats/capture-scenario.md).
//
// The input must be at most MaxScenarioBytes of valid UTF-8 holding exactly
// one JSON object (nothing but whitespace after it), nested at most
// MaxDepth deep, with no duplicate member names and no unpaired surrogate
// escapes at any depth (the opaque replay and reactive values included),
// and only numbers RFC 8785 keeps exactly. Unknown members are rejected at
// every level of the schema. Members with a default in the table take it
// when absent; lists default to empty; every other member is required.
// Every type, bound and cross-field rule of the table is checked, and
// nothing is ever repaired: ParseScenario returns either the scenario (with
// every default applied, ready to hash) and no issues, or nil and every
// violation found (at most MaxIssues, the last then being
// CodeTooManyIssues), each naming its JSON path. It never panics.
//
// Integer members accept any JSON number with an integral value (so 5.0 is
// 5). String lengths are counted in Unicode code points. Strings that reach
// exec or the file system (paths, arguments, environment values, shim
// route arguments) must not contain NUL. A reactive graph is checked by
// reactive.Check at "$.reactive" against timeout_ms and the checkpoint
// names, and none of its identifiers may hold a secret value.
func ParseScenario(data []byte) (*Scenario, []Issue) {
	if len(data) > MaxScenarioBytes {
		return nil, []Issue{{Code: CodeTooLarge, Path: "$", Message: fmt.Sprintf("scenario is %d bytes; the limit is %d bytes", len(data), MaxScenarioBytes)}}
	}
	if !utf8.Valid(data) {
		return nil, []Issue{{Code: CodeInvalidUTF8, Path: "$", Message: "scenario is not valid UTF-8"}}
	}
	var issues strictjson.Collector
	root := decodeDocument(data, &issues)
	if root == nil {
		return nil, issues.List
	}
	c := &checker{strictjson.Checker{Issues: &issues}}
	sc := c.scenario(root)
	if len(issues.List) > 0 {
		return nil, issues.List
	}
	return sc, nil
}

func (c *checker) scenario(root *strictjson.Node) *Scenario {
	m, ok := c.object(root, "$", scenarioFields()...)
	if !ok {
		return nil
	}
	sc := &Scenario{}
	if v, ok := c.Required(m, "$", "approved"); ok {
		switch {
		case v.Kind != strictjson.Bool:
			c.Add("$.approved", CodeWrongType, "must be the literal true, not %s", v.Kind)
		case !v.Bool:
			c.Add("$.approved", CodeInvalidValue, "must be the literal true")
		default:
			sc.Approved = true
		}
	}
	if s, ok := c.ReqStr(m, "$", "executable"); ok && c.absPath(s, "$.executable") {
		sc.Executable = s
	}
	sc.Arguments = []string{}
	c.listField(m, "$", "arguments", 0, MaxArguments, func(_ int, e *strictjson.Node, at string) {
		if s, ok := c.Str(e, at); ok && c.noNUL(s, at) {
			sc.Arguments = append(sc.Arguments, s)
		}
	})
	if s, ok := c.ReqStr(m, "$", "working_directory"); ok && c.absPath(s, "$.working_directory") {
		sc.WorkingDirectory = s
	}
	sc.Environment = c.environment(m)
	sc.InheritEnvironment = c.stringList(m, "$", "inherit_environment", MaxEnvNameLists, c.envName)
	for i, name := range sc.InheritEnvironment {
		if _, set := sc.Environment[name]; set {
			c.Add(fmt.Sprintf("$.inherit_environment[%d]", i), CodeConflict, "%s is both set in environment and inherited", name)
		}
	}
	sc.SecretAliases = c.stringList(m, "$", "secret_aliases", MaxEnvNameLists, c.envName)
	for i, name := range sc.SecretAliases {
		if sc.Environment[name] == "" {
			c.Add(fmt.Sprintf("$.secret_aliases[%d]", i), CodeMissingSecret, "%s has no non-empty value in environment", name)
		}
	}
	sc.NetworkAccess = "host"
	if v, ok := m["network_access"]; ok {
		c.Enum(v, "$.network_access", "host")
	}
	sc.FilesystemRoots = c.stringList(m, "$", "filesystem_roots", MaxFilesystemRoots, c.absPath)
	sc.Terminal = c.terminal(m)
	sc.TimeoutMS, ok = c.IntField(m, "$", "timeout_ms", 1, MaxTimeoutMS, 30000)
	sc.Events = c.events(m, sc.TimeoutMS, ok)
	sc.Checkpoints = c.checkpoints(m)
	sc.CommandShims = c.shims(m)
	sc.IdleTimeoutMS, _ = c.IntField(m, "$", "idle_timeout_ms", 1, MaxTimeoutMS, 30000)
	sc.SettleMS, _ = c.IntField(m, "$", "settle_ms", 0, MaxSettleMS, 100)
	sc.Limits = c.limits(m)
	sc.Normalization = c.normalization(m)
	sc.Replay = loopback.Check(&c.Checker, m)
	sc.Reactive = c.reactive(m, sc) // reactive_parse.go
	return sc
}

// environment reads the environment object.
func (c *checker) environment(m strictjson.Members) map[string]string {
	env := map[string]string{}
	v, ok := m["environment"]
	if !ok {
		return env
	}
	if v.Kind != strictjson.Object {
		c.Add("$.environment", CodeWrongType, "must be an object of strings, not %s", v.Kind)
		return env
	}
	for i, k := range v.Keys {
		at := "$.environment" + strictjson.KeyPath(k)
		if _, dup := env[k]; dup || !c.envName(k, at) {
			continue
		}
		if s, ok := c.Str(v.Vals[i], at); ok && c.noNUL(s, at) {
			env[k] = s
		}
	}
	return env
}

func (c *checker) terminal(m strictjson.Members) Terminal {
	t := Terminal{Columns: 80, Rows: 24, Scrollback: 1000}
	v, ok := m["terminal"]
	if !ok {
		return t
	}
	tm, ok := c.object(v, "$.terminal", "columns", "rows", "scrollback")
	if !ok {
		return t
	}
	t.Columns, _ = c.IntField(tm, "$.terminal", "columns", 1, MaxTerminalSize, 80)
	t.Rows, _ = c.IntField(tm, "$.terminal", "rows", 1, MaxTerminalSize, 24)
	t.Scrollback, _ = c.IntField(tm, "$.terminal", "scrollback", 0, MaxScrollback, 1000)
	return t
}

// EnvironmentNames returns the names the scenario sets, sorted.
func (s *Scenario) EnvironmentNames() []string {
	names := make([]string, 0, len(s.Environment))
	for k := range s.Environment {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Process-capture operator policy: the stored settings (with environment
// overrides for headless use), their strict parser, and the ordered checks a
// capture request must pass before anything is launched.

package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Where the process-capture operator policy is stored.
const (
	CaptureSettingsNamespace = "app-settings"
	CaptureSettingsKey       = "process_capture_policy"
)

// MaxCaptureListEntries bounds each list of CaptureSettings.
const MaxCaptureListEntries = 64

// captureMaxIssues bounds how many issues one parse reports; a document with
// more problems is still rejected, the excess is just not listed.
const captureMaxIssues = 100

// Environment overrides of the stored settings (headless use). An empty or
// unset variable leaves the stored value alone; a set variable replaces it.
const (
	CaptureEnvEnabled              = "GATEHOUSE_PROCESS_CAPTURE_ENABLED"
	CaptureEnvExecutableRoots      = "GATEHOUSE_PROCESS_EXECUTABLE_ROOTS_JSON"
	CaptureEnvWorkingRoots         = "GATEHOUSE_PROCESS_WORKING_ROOTS_JSON"
	CaptureEnvAllowedEnv           = "GATEHOUSE_PROCESS_ALLOWED_ENV_JSON"
	CaptureEnvAllowExternalNetwork = "GATEHOUSE_PROCESS_ALLOW_EXTERNAL_NETWORK"
	CaptureEnvAutoGrant            = "GATEHOUSE_PROCESS_CAPTURE_AUTO_GRANT"
)

// Stable reasons reported by CheckCapture, in check order.
const (
	ReasonCaptureDisabled              = "capture_disabled"
	ReasonScenarioNotApproved          = "scenario_not_approved"
	ReasonHostNetworkNotApproved       = "host_network_not_approved"
	ReasonExecutableOutsideRoots       = "executable_outside_roots"
	ReasonWorkingDirectoryOutsideRoots = "working_directory_outside_roots"
	ReasonEnvironmentNameNotAllowed    = "environment_name_not_allowed"
	ReasonFilesystemRootOutsideRoots   = "filesystem_root_outside_roots"
)

// Stable codes of CaptureIssue.
const (
	CaptureIssueInvalidJSON    = "invalid_json"     // not UTF-8 JSON, or trailing data
	CaptureIssueWrongType      = "wrong_type"       // a value of the wrong JSON type (null included)
	CaptureIssueUnknownField   = "unknown_field"    // a key that is not a settings field (keys are case-sensitive)
	CaptureIssueDuplicateField = "duplicate_field"  // the same key twice in the settings object
	CaptureIssueRelativePath   = "relative_path"    // a path that is not absolute (the empty string included)
	CaptureIssueUncleanPath    = "unclean_path"     // a path that filepath.Clean would change
	CaptureIssueDuplicateEntry = "duplicate_entry"  // the same entry twice in one list
	CaptureIssueInvalidEnvName = "invalid_env_name" // not ^[A-Za-z_][A-Za-z0-9_]*$
	CaptureIssueTooManyEntries = "too_many_entries" // more than MaxCaptureListEntries
	CaptureIssueInvalidPath    = "invalid_path"     // a path containing a NUL byte
)

// CaptureSettings is the stored operator policy (settings namespace
// "app-settings", key "process_capture_policy").
//
// It marshals with empty lists as [] (never null) and unmarshals through
// ParseCaptureSettings, so encoding/json cannot bypass the strict rules.
type CaptureSettings struct {
	Enabled              bool     `json:"enabled"`              // default false
	ExecutableRoots      []string `json:"executableRoots"`      // absolute, cleaned
	WorkingRoots         []string `json:"workingRoots"`         // also bound filesystem roots
	AllowedEnv           []string `json:"allowedEnv"`           // environment variable NAMES
	AllowExternalNetwork bool     `json:"allowExternalNetwork"` // host networking approval
	AutoGrant            bool     `json:"autoGrant"`            // default true
}

// DefaultCaptureSettings is the policy in force when nothing is stored:
// capture disabled, no roots, no environment names, no host networking,
// auto-grant on.
func DefaultCaptureSettings() CaptureSettings {
	return CaptureSettings{
		ExecutableRoots: []string{},
		WorkingRoots:    []string{},
		AllowedEnv:      []string{},
		AutoGrant:       true,
	}
}

// CaptureIssue is one reason a settings document or override was rejected:
// the issue every Gatehouse parser reports. Path is a JSON path such as
// "$.executableRoots[2]"; Code is one of the CaptureIssue* constants;
// Message is for people.
type CaptureIssue = Issue

// CaptureSettingsError carries the issues of a rejected settings document.
type CaptureSettingsError struct{ Issues []CaptureIssue }

func (e *CaptureSettingsError) Error() string {
	parts := make([]string, len(e.Issues))
	for i, is := range e.Issues {
		parts[i] = is.String()
	}
	return "invalid process capture settings: " + strings.Join(parts, "; ")
}

// CaptureEnvError is a malformed environment override.
type CaptureEnvError struct {
	Variable string
	Message  string
}

func (e *CaptureEnvError) Error() string {
	return fmt.Sprintf("%s: %s", e.Variable, e.Message)
}

var captureEnvNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// captureFields lists the settings keys in document order.
var captureFields = []string{"enabled", "executableRoots", "workingRoots", "allowedEnv", "allowExternalNetwork", "autoGrant"}

// captureIssues collects issues up to captureMaxIssues.
type captureIssues struct{ list []CaptureIssue }

func (c *captureIssues) add(field, code, format string, args ...any) {
	if len(c.list) < captureMaxIssues {
		c.list = append(c.list, CaptureIssue{Path: field, Code: code, Message: fmt.Sprintf(format, args...)})
	}
}

// captureFieldPath renders the JSON path of a top-level key
// (strictjson's one path syntax).
func captureFieldPath(key string) string { return strictjson.JoinPath("$", key) }

// ParseCaptureSettings strictly parses a stored settings document. Missing
// fields take their defaults. Unknown or duplicated fields, wrong types
// (null included), relative or non-clean paths, duplicate list entries,
// invalid environment names and lists longer than MaxCaptureListEntries
// reject the document whole: the result is then DefaultCaptureSettings()
// (capture disabled) together with every issue found.
func ParseCaptureSettings(data []byte) (CaptureSettings, []CaptureIssue) {
	var issues captureIssues
	if !utf8.Valid(data) {
		issues.add("$", CaptureIssueInvalidJSON, "settings are not valid UTF-8")
		return DefaultCaptureSettings(), issues.list
	}
	if !json.Valid(data) {
		issues.add("$", CaptureIssueInvalidJSON, "settings are not a single valid JSON value")
		return DefaultCaptureSettings(), issues.list
	}
	trimmed := bytes.TrimSpace(data)
	if trimmed[0] != '{' {
		issues.add("$", CaptureIssueWrongType, "settings must be a JSON object")
		return DefaultCaptureSettings(), issues.list
	}

	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil { // the '{'
		issues.add("$", CaptureIssueInvalidJSON, "settings are not valid JSON: %v", err)
		return DefaultCaptureSettings(), issues.list
	}
	values := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			issues.add("$", CaptureIssueInvalidJSON, "settings are not valid JSON: %v", err)
			return DefaultCaptureSettings(), issues.list
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			issues.add("$", CaptureIssueInvalidJSON, "settings are not valid JSON: %v", err)
			return DefaultCaptureSettings(), issues.list
		}
		field := captureFieldPath(key)
		if !slices.Contains(captureFields, key) {
			issues.add(field, CaptureIssueUnknownField, "unknown field %q", key)
			continue
		}
		if _, dup := values[key]; dup {
			issues.add(field, CaptureIssueDuplicateField, "field %q appears more than once", key)
			continue
		}
		values[key] = raw
	}

	s := DefaultCaptureSettings()
	for _, key := range captureFields {
		raw, ok := values[key]
		if !ok {
			continue
		}
		field := captureFieldPath(key)
		switch key {
		case "enabled":
			s.Enabled = captureParseBool(raw, field, &issues, s.Enabled)
		case "allowExternalNetwork":
			s.AllowExternalNetwork = captureParseBool(raw, field, &issues, s.AllowExternalNetwork)
		case "autoGrant":
			s.AutoGrant = captureParseBool(raw, field, &issues, s.AutoGrant)
		case "executableRoots":
			s.ExecutableRoots = captureParseList(raw, field, captureCheckPath, &issues)
		case "workingRoots":
			s.WorkingRoots = captureParseList(raw, field, captureCheckPath, &issues)
		case "allowedEnv":
			s.AllowedEnv = captureParseList(raw, field, captureCheckEnvName, &issues)
		}
	}
	if len(issues.list) > 0 {
		return DefaultCaptureSettings(), issues.list
	}
	return s, nil
}

func captureParseBool(raw json.RawMessage, field string, issues *captureIssues, def bool) bool {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true
	case "false":
		return false
	}
	issues.add(field, CaptureIssueWrongType, "must be true or false")
	return def
}

// captureParseList parses a JSON array of strings, checking every entry
// with check and rejecting duplicates and overlong lists. It returns a
// non-nil slice (possibly partial when issues were recorded).
func captureParseList(raw json.RawMessage, field string, check func(string) (code, message string), issues *captureIssues) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		issues.add(field, CaptureIssueWrongType, "must be an array of strings")
		return []string{}
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		issues.add(field, CaptureIssueWrongType, "must be an array of strings")
		return []string{}
	}
	if len(elems) > MaxCaptureListEntries {
		issues.add(field, CaptureIssueTooManyEntries, "has %d entries, at most %d are allowed", len(elems), MaxCaptureListEntries)
		return []string{}
	}
	out := make([]string, 0, len(elems))
	seen := make(map[string]int, len(elems))
	for i, e := range elems {
		at := fmt.Sprintf("%s[%d]", field, i)
		e = bytes.TrimSpace(e)
		var v string
		if len(e) == 0 || e[0] != '"' || json.Unmarshal(e, &v) != nil {
			issues.add(at, CaptureIssueWrongType, "must be a string")
			continue
		}
		if code, msg := check(v); code != "" {
			issues.add(at, code, "%s", msg)
			continue
		}
		if first, dup := seen[v]; dup {
			issues.add(at, CaptureIssueDuplicateEntry, "%q duplicates entry %d", v, first)
			continue
		}
		seen[v] = i
		out = append(out, v)
	}
	return out
}

func captureCheckPath(p string) (code, message string) {
	switch {
	case strings.ContainsRune(p, 0):
		return CaptureIssueInvalidPath, "path contains a NUL byte"
	case !filepath.IsAbs(p):
		return CaptureIssueRelativePath, fmt.Sprintf("%q is not an absolute path", p)
	case filepath.Clean(p) != p:
		return CaptureIssueUncleanPath, fmt.Sprintf("%q is not clean (did you mean %q?)", p, filepath.Clean(p))
	}
	return "", ""
}

func captureCheckEnvName(n string) (code, message string) {
	if !captureEnvNamePattern.MatchString(n) {
		return CaptureIssueInvalidEnvName, fmt.Sprintf("%q is not a valid environment variable name (^[A-Za-z_][A-Za-z0-9_]*$)", n)
	}
	return "", ""
}

// MarshalJSON writes the settings with every list present ([] for nil).
func (s CaptureSettings) MarshalJSON() ([]byte, error) {
	type plain CaptureSettings
	p := plain(s)
	if p.ExecutableRoots == nil {
		p.ExecutableRoots = []string{}
	}
	if p.WorkingRoots == nil {
		p.WorkingRoots = []string{}
	}
	if p.AllowedEnv == nil {
		p.AllowedEnv = []string{}
	}
	return json.Marshal(p)
}

// UnmarshalJSON parses with ParseCaptureSettings; a rejected document is a
// *CaptureSettingsError and leaves s unchanged.
func (s *CaptureSettings) UnmarshalJSON(data []byte) error {
	parsed, issues := ParseCaptureSettings(data)
	if len(issues) > 0 {
		return &CaptureSettingsError{Issues: issues}
	}
	*s = parsed
	return nil
}

// WithEnvOverrides applies the GATEHOUSE_PROCESS_* overrides (see the
// CaptureEnv* constants) on top of s. getenv is usually os.Getenv (nil means
// os.Getenv). An empty value leaves the stored setting alone; booleans take
// exactly "1", "true", "0" or "false"; lists take a JSON array checked by the
// same rules as the stored document, and replace the stored list ("[]"
// clears it). A malformed value is an error naming the variable (all
// malformed variables are reported, joined); the settings returned with an
// error are DefaultCaptureSettings(), i.e. capture disabled. The result never
// shares list storage with s.
func (s CaptureSettings) WithEnvOverrides(getenv func(string) string) (CaptureSettings, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	out := s
	out.ExecutableRoots = slices.Clone(s.ExecutableRoots)
	out.WorkingRoots = slices.Clone(s.WorkingRoots)
	out.AllowedEnv = slices.Clone(s.AllowedEnv)

	var errs []error
	bools := []struct {
		name string
		dst  *bool
	}{
		{CaptureEnvEnabled, &out.Enabled},
		{CaptureEnvAllowExternalNetwork, &out.AllowExternalNetwork},
		{CaptureEnvAutoGrant, &out.AutoGrant},
	}
	for _, b := range bools {
		v := getenv(b.name)
		switch v {
		case "":
		case "1", "true":
			*b.dst = true
		case "0", "false":
			*b.dst = false
		default:
			errs = append(errs, &CaptureEnvError{Variable: b.name, Message: fmt.Sprintf("%q is not one of 1, true, 0, false", v)})
		}
	}
	lists := []struct {
		name  string
		dst   *[]string
		check func(string) (string, string)
	}{
		{CaptureEnvExecutableRoots, &out.ExecutableRoots, captureCheckPath},
		{CaptureEnvWorkingRoots, &out.WorkingRoots, captureCheckPath},
		{CaptureEnvAllowedEnv, &out.AllowedEnv, captureCheckEnvName},
	}
	for _, l := range lists {
		v := getenv(l.name)
		if v == "" {
			continue
		}
		if !utf8.ValidString(v) || !json.Valid([]byte(v)) {
			errs = append(errs, &CaptureEnvError{Variable: l.name, Message: "value is not valid JSON (want a JSON array of strings)"})
			continue
		}
		var issues captureIssues
		list := captureParseList(json.RawMessage(v), "$", l.check, &issues)
		if len(issues.list) > 0 {
			parts := make([]string, len(issues.list))
			for i, is := range issues.list {
				parts[i] = is.String()
			}
			errs = append(errs, &CaptureEnvError{Variable: l.name, Message: strings.Join(parts, "; ")})
			continue
		}
		*l.dst = list
	}
	if len(errs) > 0 {
		return DefaultCaptureSettings(), errors.Join(errs...)
	}
	return out, nil
}

// CaptureRequest is what a scenario asks for (filled by the capture package).
// Paths are judged after resolving symlinks (see ResolveCapture).
type CaptureRequest struct {
	Approved        bool     // the scenario's "approved": true
	Executable      string   // absolute path of the program
	WorkingDir      string   // absolute working directory
	EnvNames        []string // names of environment variables the scenario sets
	FilesystemRoots []string // roots the scenario snapshots/binds
	ExternalNetwork bool     // scenario wants host networking
}

// CheckCapture runs the ordered checks and returns "" when the request is
// allowed, else the stable reason of the FIRST failing check (one of the
// Reason* constants, in their declared order, or ReasonUncleanPath at the
// place of the path it concerns) with a human message. It is
// ResolveCapture without the resolved request.
func (s CaptureSettings) CheckCapture(r CaptureRequest) (reason, message string) {
	_, reason, message = s.ResolveCapture(r)
	return reason, message
}

// ResolveCapture runs the ordered checks on r as the kernel will see it:
// a path that filepath.Clean would change is refused (ReasonUncleanPath);
// otherwise every symlink of the executable, the working directory, each
// filesystem root and each configured root is resolved (ResolvePath), and
// the resolved path must equal a resolved root or continue it after a "/".
// On success (reason "") it returns r with those paths replaced by the
// resolved ones: the caller must execute and enter exactly those.
func (s CaptureSettings) ResolveCapture(r CaptureRequest) (resolved CaptureRequest, reason, message string) {
	if !s.Enabled {
		return CaptureRequest{}, ReasonCaptureDisabled, "process capture is disabled in the operator policy"
	}
	if !r.Approved {
		return CaptureRequest{}, ReasonScenarioNotApproved, `the scenario must contain "approved": true`
	}
	if r.ExternalNetwork && !s.AllowExternalNetwork {
		return CaptureRequest{}, ReasonHostNetworkNotApproved, "the scenario wants host networking, which the operator policy does not allow"
	}
	out := r
	out.EnvNames = slices.Clone(r.EnvNames)
	out.FilesystemRoots = make([]string, len(r.FilesystemRoots))
	var code string
	if out.Executable, code, message = judgePath("executable", r.Executable, resolvedRoots(s.ExecutableRoots), ReasonExecutableOutsideRoots); code != "" {
		return CaptureRequest{}, code, message
	}
	working := resolvedRoots(s.WorkingRoots)
	if out.WorkingDir, code, message = judgePath("working directory", r.WorkingDir, working, ReasonWorkingDirectoryOutsideRoots); code != "" {
		return CaptureRequest{}, code, message
	}
	for _, name := range r.EnvNames {
		if !slices.Contains(s.AllowedEnv, name) {
			return CaptureRequest{}, ReasonEnvironmentNameNotAllowed, fmt.Sprintf("environment variable %q is not in the allowed environment names", name)
		}
	}
	for i, root := range r.FilesystemRoots {
		if out.FilesystemRoots[i], code, message = judgePath("filesystem root", root, working, ReasonFilesystemRootOutsideRoots); code != "" {
			return CaptureRequest{}, code, message
		}
	}
	return out, "", ""
}

// WithinRoot reports whether p is within root: after filepath.Clean of both
// (both must be absolute), p equals root or continues it after a "/".
// "/a/bc" is not within "/a/b"; "/" contains every absolute path; relative
// (or empty) paths and roots are never within anything. The comparison is
// lexical: symlinks are not resolved, so a decision about what the kernel
// will reach must compare resolved paths (ResolveCapture does).
func WithinRoot(p, root string) bool {
	if !filepath.IsAbs(p) || !filepath.IsAbs(root) {
		return false
	}
	p, root = filepath.Clean(p), filepath.Clean(root)
	if p == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(p, root)
}

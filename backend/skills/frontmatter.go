package skills

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/bundle"
	"go.yaml.in/yaml/v3"
)

// Agent Skills frontmatter limits.
const (
	MaxNameChars          = 64
	MaxDescriptionChars   = 1024
	MaxCompatibilityChars = 500
)

// NotEnforced is the note attached to every frontmatter field Gatehouse
// does not understand.
const NotEnforced = "not enforced by Gatehouse"

var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Frontmatter is the parsed Agent Skills header of a SKILL.md (or legacy
// NAME.md). Raw is the exact YAML text between the delimiters.
type Frontmatter struct {
	Name          string            `json:"name,omitempty"`
	Description   string            `json:"description,omitempty"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	AllowedTools  []string          `json:"allowed_tools,omitempty"`
	Raw           string            `json:"raw"`
}

// UnknownField is a frontmatter field outside the Agent Skills set (another
// host's field such as disable-model-invocation or hooks). Raw is its exact
// source text; Gatehouse never rewrites or acts on it.
type UnknownField struct {
	Key  string `json:"key"`
	Raw  string `json:"raw"`
	Note string `json:"note"`
}

// parsed is the result of reading one skill document.
type parsed struct {
	fm       Frontmatter
	unknown  []UnknownField
	body     string
	errors   []bundle.Issue // make the skill invalid
	warnings []bundle.Issue // the skill loads anyway
}

func (p *parsed) errorf(code, path, format string, args ...any) {
	p.errors = append(p.errors, bundle.Issue{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (p *parsed) warnf(code, path, format string, args ...any) {
	p.warnings = append(p.warnings, bundle.Issue{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}

// splitFrontmatter separates "---\n<yaml>\n---\n<body>". It reports
// ok=false when the document does not open with a frontmatter block or the
// block is never closed.
func splitFrontmatter(doc []byte) (yamlText, body string, ok bool) {
	s := string(doc)
	first, rest, found := strings.Cut(s, "\n")
	if !found || strings.TrimRight(first, "\r \t") != "---" {
		return "", "", false
	}
	offset := 0
	for offset <= len(rest) {
		line, after, more := strings.Cut(rest[offset:], "\n")
		if t := strings.TrimRight(line, "\r \t"); t == "---" || t == "..." {
			return rest[:offset], after, true
		}
		if !more {
			break
		}
		offset += len(line) + 1
	}
	return "", "", false
}

// parseDocument parses a skill document's frontmatter with a real YAML
// parser and checks it against the Agent Skills rules. folder is the name
// the skill is found under (folder name, or file stem for flat skills).
func parseDocument(doc []byte, folder string) *parsed {
	p := &parsed{}
	if !utf8.Valid(doc) {
		p.errorf("invalid_utf8", "SKILL.md", "the file is not valid UTF-8")
		return p
	}
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	yamlText, body, ok := splitFrontmatter(doc)
	if !ok {
		p.errorf("missing_frontmatter", "$", "the file must start with a YAML frontmatter block between '---' lines")
		return p
	}
	p.fm.Raw, p.body = yamlText, body
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(yamlText), &root); err != nil {
		p.errorf("invalid_yaml", "$", "frontmatter is not valid YAML: %v", err)
		return p
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode {
		p.errorf("frontmatter_not_mapping", "$", "frontmatter must be a YAML mapping of fields")
		return p
	}
	m := root.Content[0]
	pos := newPositions(yamlText)
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf("invalid_key", fmt.Sprintf("$:%d", k.Line), "frontmatter keys must be plain strings")
			continue
		}
		key := k.Value
		path := bundle.JoinPath("$", key)
		if seen[key] {
			p.errorf("duplicate_key", path, "field %q appears more than once", key)
			continue
		}
		seen[key] = true
		if !noNestedDuplicates(p, v, path) {
			continue
		}
		switch key {
		case "name":
			p.fm.Name = scalarString(p, v, path)
		case "description":
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				p.errorf("invalid_description", path, "description must be a string")
				continue
			}
			p.fm.Description = v.Value
		case "license":
			p.fm.License = scalarString(p, v, path)
		case "compatibility":
			p.fm.Compatibility = scalarString(p, v, path)
		case "metadata":
			p.fm.Metadata = metadataMap(p, v, path)
		case "allowed-tools":
			if v.Kind != yaml.ScalarNode {
				p.warnf("invalid_allowed_tools", path, "allowed-tools must be a space-separated string")
				continue
			}
			p.fm.AllowedTools = strings.Fields(v.Value)
		default:
			start := pos.offset(k.Line, k.Column)
			end := len(yamlText)
			if i+2 < len(m.Content) {
				nk := m.Content[i+2]
				end = pos.offset(nk.Line, nk.Column)
			}
			p.unknown = append(p.unknown, UnknownField{Key: key, Raw: yamlText[start:end], Note: NotEnforced})
		}
	}
	checkAgentSkillsRules(p, folder)
	return p
}

func checkAgentSkillsRules(p *parsed, folder string) {
	switch n := p.fm.Name; {
	case n == "":
		p.warnf("missing_name", "$.name", "name is missing; the skill is listed under %q", folder)
	default:
		if utf8.RuneCountInString(n) > MaxNameChars {
			p.warnf("name_too_long", "$.name", "name has %d characters; the limit is %d", utf8.RuneCountInString(n), MaxNameChars)
		}
		if !namePattern.MatchString(n) {
			p.warnf("invalid_name", "$.name", "name must use lowercase a-z, 0-9 and single hyphens, not starting or ending with a hyphen")
		}
		if n != folder {
			p.warnf("name_mismatch", "$.name", "name %q does not match its folder %q; the skill is listed under %q", n, folder, folder)
		}
	}
	if strings.TrimSpace(p.fm.Description) == "" {
		if len(p.errors) == 0 {
			p.errorf("missing_description", "$.description", "description is required (1-%d characters)", MaxDescriptionChars)
		}
	} else if c := utf8.RuneCountInString(p.fm.Description); c > MaxDescriptionChars {
		p.warnf("description_too_long", "$.description", "description has %d characters; the limit is %d", c, MaxDescriptionChars)
	}
	if c := utf8.RuneCountInString(p.fm.Compatibility); c > MaxCompatibilityChars {
		p.warnf("compatibility_too_long", "$.compatibility", "compatibility has %d characters; the limit is %d", c, MaxCompatibilityChars)
	}
}

func scalarString(p *parsed, v *yaml.Node, path string) string {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		p.warnf("wrong_type", path, "must be a string")
		return ""
	}
	return v.Value
}

func metadataMap(p *parsed, v *yaml.Node, path string) map[string]string {
	if v.Kind != yaml.MappingNode {
		p.warnf("invalid_metadata", path, "metadata must be a map of string keys to string values")
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		kp := bundle.JoinPath(path, k.Value)
		if k.Kind != yaml.ScalarNode {
			p.warnf("invalid_metadata", path, "metadata keys must be strings")
			continue
		}
		if val.Kind != yaml.ScalarNode || val.Tag != "!!str" {
			p.warnf("invalid_metadata", kp, "metadata values must be strings (quote %q)", val.Value)
			if val.Kind != yaml.ScalarNode {
				continue
			}
		}
		out[k.Value] = val.Value
	}
	return out
}

// positions converts yaml.v3 positions (1-based line and rune column)
// into byte offsets of s. Mapping keys are asked for in document order, so
// it walks forward from the last position it returned instead of from the
// start of the line: converting every key of a one-line flow mapping is
// linear in the size of s, not quadratic (docs/formats/skill-md.md, "Document rules").
type positions struct {
	s         string
	lines     []int // byte offset at which each line starts
	line, col int   // the last position converted ...
	off       int   // ... and its byte offset
	walked    int   // runes stepped over in all (the linearity test reads it)
}

func newPositions(s string) *positions {
	lines := []int{0}
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines = append(lines, i+1)
		}
	}
	return &positions{s: s, lines: lines}
}

// offset returns the byte offset of (line, col); a line past the end is
// len(s), a column past the end of its line stops at the newline.
func (p *positions) offset(line, col int) int {
	if line < 1 || line > len(p.lines) {
		return len(p.s)
	}
	o, c := p.lines[line-1], 1
	if line == p.line && col >= p.col {
		o, c = p.off, p.col // continue forward on the same line
	}
	for ; c < col && o < len(p.s) && p.s[o] != '\n'; c++ {
		_, n := utf8.DecodeRuneInString(p.s[o:])
		o += n
		p.walked++
	}
	p.line, p.col, p.off = line, c, o
	return o
}

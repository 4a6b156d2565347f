package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// parseExecution is ParseExecution; with stored, receipts are kept (a
// stored scope has both receiptId and approvedAt, or neither) for the
// caller to verify.
//
// The document is read member by member rather than into a struct, so that
// a member of the wrong type, or one that is unknown, is reported at its own
// path while every other member is still checked: a person who saves a form
// with three mistakes hears of all three at once. Member names are matched
// as encoding/json matches them (case-insensitively; a repeated member keeps
// its last value), as docs/formats/execution-policy.md says.
func parseExecution(data []byte, stored bool) (Execution, error) {
	v := &validator{}
	p := DefaultExecution()
	scopes, err := v.top(data, &p)
	if err != nil {
		return Execution{}, err
	}
	seen := map[string]int{}
	for i, r := range scopes {
		path := fmt.Sprintf("$.trusted[%d]", i)
		before := len(v.errs)
		s, ok := v.scope(r, path)
		if !ok || len(v.errs) > before {
			continue
		}
		if !stored {
			s.ReceiptID, s.ApprovedAt = nil, nil // callers cannot mint receipts
		} else if (s.ReceiptID == nil) != (s.ApprovedAt == nil) {
			v.add("invalid_receipt", path, "receiptId and approvedAt must both be set or both be null")
			continue
		}
		if j, dup := seen[s.key()]; dup {
			v.add("duplicate_scope", path, "same scope as trusted[%d]", j)
			continue
		}
		seen[s.key()] = i
		p.Trusted = append(p.Trusted, s)
	}
	if len(v.errs) > 0 {
		return Execution{}, &ValidationError{v.errs}
	}
	return p, nil
}

// alone reports whether nothing but white space follows the value dec
// decoded (a stray "]" or "}" counts as something; dec.More does not see it).
func alone(dec *json.Decoder) bool {
	_, err := dec.Token()
	return err == io.EOF
}

// top reads the policy's own members (mode, safeMode) into p and returns its
// scopes, unread; a document that is not one JSON object is an error. A
// document whose members are all present and of their types is read in one
// strict decode; any other member by member, reporting each problem.
func (v *validator) top(data []byte, p *Execution) ([]json.RawMessage, error) {
	var strict struct {
		Mode     *string           `json:"mode"`
		SafeMode *bool             `json:"safeMode"`
		Trusted  []json.RawMessage `json:"trusted"`
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if d.Decode(&strict) == nil && alone(d) && strict.Mode != nil && strict.SafeMode != nil && knownMode(Mode(*strict.Mode)) && len(strict.Trusted) <= MaxScopes {
		p.Mode, p.SafeMode = Mode(*strict.Mode), *strict.SafeMode
		return strict.Trusted, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var whole json.RawMessage
	if err := dec.Decode(&whole); err != nil {
		return nil, &ValidationError{[]FieldError{{Issue: strictjson.Issue{Code: "invalid_json", Path: "$", Message: err.Error()}}}}
	}
	if !alone(dec) {
		return nil, &ValidationError{[]FieldError{{Issue: strictjson.Issue{Code: "trailing_data", Path: "$", Message: "more than one JSON value"}}}}
	}
	top, ok := objectMembers(whole)
	if !ok {
		return nil, &ValidationError{[]FieldError{{Issue: strictjson.Issue{Code: "invalid_json", Path: "$", Message: "the policy must be a JSON object"}}}}
	}
	var mode, safeMode, trusted json.RawMessage
	for _, m := range top {
		switch {
		case strings.EqualFold(m.name, "mode"):
			mode = m.value
		case strings.EqualFold(m.name, "safeMode"):
			safeMode = m.value
		case strings.EqualFold(m.name, "trusted"):
			trusted = m.value
		default:
			v.add("unknown_field", memberPath("$", m.name), "unknown member; the policy has mode, safeMode and trusted")
		}
	}
	var modeText string
	switch {
	case mode == nil:
		v.add("missing_field", "$.mode", "mode is required")
	case !v.decode(mode, &modeText, "$.mode", "must be a string"):
	case knownMode(Mode(modeText)):
		p.Mode = Mode(modeText)
	default:
		v.add("invalid_mode", "$.mode", "mode must be ask, blocked, workflow or trusted_revisions, got %q", modeText)
	}
	if safeMode == nil {
		v.add("missing_field", "$.safeMode", "safeMode is required")
	} else {
		v.decode(safeMode, &p.SafeMode, "$.safeMode", "must be true or false")
	}
	var scopes []json.RawMessage
	if trusted != nil && v.decode(trusted, &scopes, "$.trusted", "must be a list of scopes") && len(scopes) > MaxScopes {
		v.add("too_many_scopes", "$.trusted", "at most %d trusted scopes, got %d", MaxScopes, len(scopes))
	}
	return scopes, nil
}

func knownMode(m Mode) bool {
	return m == ModeAsk || m == ModeBlocked || m == ModeWorkflow || m == ModeTrusted
}

// validator collects every problem of one submission.
type validator struct{ errs []FieldError }

func (v *validator) add(code, path, format string, args ...any) {
	v.errs = append(v.errs, FieldError{Issue: strictjson.Issue{Code: code, Path: path, Message: fmt.Sprintf(format, args...)}})
}

// decode unmarshals raw into dst; a JSON null or a value of another type
// is an invalid_type problem at path with the message want.
func (v *validator) decode(raw json.RawMessage, dst any, path, want string) bool {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, dst) != nil {
		v.add("invalid_type", path, "%s", want)
		return false
	}
	return true
}

// scope reads one trusted scope; ok is false when it is not an object at
// all. Problems are added to v. A scope without any problem is read in one
// strict decode (every run reads the stored policy); any other is read
// member by member, which reports each problem (scopeMembers).
func (v *validator) scope(raw json.RawMessage, path string) (Scope, bool) {
	if s, ok := cleanScope(raw); ok {
		return s, true
	}
	return v.scopeMembers(raw, path)
}

// cleanScope decodes raw strictly (no unknown member, every value of its
// type) and reports ok only when the scope also passes every check
// scopeMembers makes; FuzzParseExecution checks the two agree.
func cleanScope(raw json.RawMessage) (s Scope, ok bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if d.Decode(&s) != nil || d.More() {
		return Scope{}, false
	}
	ok = revisionPattern.MatchString(s.Revision) &&
		s.AgentID != "" && len(s.AgentID) <= maxAgentIDLength &&
		filepath.IsAbs(s.Workspace) && filepath.Clean(s.Workspace) == s.Workspace &&
		s.TimeoutMsCeiling >= minTimeoutMs && s.TimeoutMsCeiling <= maxTimeoutMs &&
		s.MaxOutputBytesCeiling >= minOutputBytes && s.MaxOutputBytesCeiling <= maxOutputBytes
	return s, ok
}

// scopeMembers reads one trusted scope member by member; ok is false when it
// is not an object at all. Problems are added to v.
func (v *validator) scopeMembers(raw json.RawMessage, path string) (s Scope, ok bool) {
	members, ok := objectMembers(raw)
	if !ok {
		v.add("invalid_scope", path, "a scope must be an object")
		return s, false
	}
	var revision, agent, workspace, timeout, output, receipt, approved json.RawMessage
	fields := []struct {
		name string
		dst  *json.RawMessage
	}{{"revision", &revision}, {"agentId", &agent}, {"workspace", &workspace}, {"timeoutMsCeiling", &timeout}, {"maxOutputBytesCeiling", &output}, {"receiptId", &receipt}, {"approvedAt", &approved}}
next:
	for _, m := range members {
		for _, f := range fields {
			if strings.EqualFold(m.name, f.name) {
				*f.dst = m.value
				continue next
			}
		}
		v.add("unknown_field", memberPath(path, m.name), "unknown member; a scope has revision, agentId, workspace, timeoutMsCeiling, maxOutputBytesCeiling, receiptId and approvedAt")
	}
	if revision == nil || v.decode(revision, &s.Revision, path+".revision", "must be a string") {
		if !revisionPattern.MatchString(s.Revision) {
			v.add("invalid_revision", path+".revision", "revision must be sha256: followed by 64 lowercase hex digits")
		}
	}
	if agent == nil || v.decode(agent, &s.AgentID, path+".agentId", "must be a string") {
		if s.AgentID == "" || len(s.AgentID) > maxAgentIDLength {
			v.add("invalid_agent", path+".agentId", "agentId must be 1-%d characters", maxAgentIDLength)
		}
	}
	if workspace == nil || v.decode(workspace, &s.Workspace, path+".workspace", "must be a string") {
		if !filepath.IsAbs(s.Workspace) || filepath.Clean(s.Workspace) != s.Workspace {
			v.add("invalid_workspace", path+".workspace", "workspace must be an absolute, clean path")
		}
	}
	s.TimeoutMsCeiling = v.integer(timeout, path+".timeoutMsCeiling", minTimeoutMs, maxTimeoutMs)
	s.MaxOutputBytesCeiling = v.integer(output, path+".maxOutputBytesCeiling", minOutputBytes, maxOutputBytes)
	if receipt != nil && !bytes.Equal(bytes.TrimSpace(receipt), []byte("null")) {
		var id string
		if v.decode(receipt, &id, path+".receiptId", "must be a string or null") {
			s.ReceiptID = &id
		}
	}
	if approved != nil && !bytes.Equal(bytes.TrimSpace(approved), []byte("null")) {
		var at time.Time
		if v.decode(approved, &at, path+".approvedAt", "must be an RFC 3339 date and time, or null") {
			s.ApprovedAt = &at
		}
	}
	return s, true
}

var integerLiteral = regexp.MustCompile(`^-?[0-9]+$`)

// integer reads a whole number within [lo, hi]; absent reads as 0. A whole
// number too large for an int is out of range, not of the wrong type.
func (v *validator) integer(raw json.RawMessage, path string, lo, hi int) int {
	n := 0
	if raw != nil {
		text := string(bytes.TrimSpace(raw))
		if !integerLiteral.MatchString(text) {
			v.add("invalid_type", path, "must be a whole number")
			return 0
		}
		parsed, err := strconv.ParseInt(text, 10, 64)
		switch {
		case err != nil && strings.HasPrefix(text, "-"):
			n = lo - 1
		case err != nil:
			n = hi + 1
		case parsed < int64(lo):
			n = lo - 1
		case parsed > int64(hi):
			n = hi + 1
		default:
			n = int(parsed)
		}
	}
	if n < lo || n > hi {
		msg := fmt.Sprintf("must be at most %d", hi)
		if n < lo {
			msg = fmt.Sprintf("must be at least %d", lo)
		}
		v.errs = append(v.errs, FieldError{Issue: strictjson.Issue{Code: "out_of_range", Path: path, Message: msg}, Min: &lo, Max: &hi})
		return 0
	}
	return n
}

// member is one member of a JSON object.
type member struct {
	name  string
	value json.RawMessage
}

// objectMembers lists the members of the JSON object raw in document order
// (a repeated name as often as it is written); ok is false when raw is not
// an object.
func objectMembers(raw json.RawMessage) (members []member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		name, isName := t.(string)
		if err != nil || !isName {
			return nil, false
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, false
		}
		members = append(members, member{name, value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, false
	}
	return members, true
}

// memberPath is the JSON path of member name under path: $.name, or
// $["odd name"] (strictjson's one path syntax).
func memberPath(path, name string) string { return strictjson.JoinPath(path, name) }

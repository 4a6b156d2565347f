package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Limits Parse enforces. docs/formats/capture-record.md: input files are refused above
// 64 MiB before parsing.
const (
	// MaxEnvelopeBytes is the largest envelope Parse reads, in bytes.
	MaxEnvelopeBytes = 64 << 20
	// MaxDepth is the deepest nesting Parse admits: the envelope object is
	// at depth 1 and each value inside a container is one deeper than the
	// container. An array or object deeper than MaxDepth stops parsing.
	MaxDepth = 512
	// MaxIssues is the most issues Parse reports. When there are more, the
	// last reported issue has code CodeTooManyIssues.
	MaxIssues = 100
)

// Issue codes. They are stable and machine readable.
const (
	// CodeTooLarge: the input exceeds MaxEnvelopeBytes.
	CodeTooLarge = "too_large"
	// CodeInvalidUTF8: the input is not valid UTF-8.
	CodeInvalidUTF8 = "invalid_utf8"
	// CodeInvalidJSON: the input is not well-formed JSON.
	CodeInvalidJSON = "invalid_json"
	// CodeTrailingData: something follows the envelope object.
	CodeTrailingData = "trailing_data"
	// CodeNotObject: the input is a JSON value other than an object.
	CodeNotObject = "not_object"
	// CodeTooDeep: nesting exceeds MaxDepth.
	CodeTooDeep = "too_deep"
	// CodeDuplicateKey: an object names the same member twice (compared
	// after unescaping).
	CodeDuplicateKey = "duplicate_key"
	// CodeInvalidString: a string escapes an unpaired UTF-16 surrogate.
	CodeInvalidString = "invalid_string"
	// CodeInexactNumber: a number is outside the IEEE-754 double range or
	// is not exactly the value RFC 8785 would write for it (for example an
	// integer beyond 2^53), so canonicalization would silently change it.
	CodeInexactNumber = "inexact_number"
	// CodeUnknownField: the member is not part of the schema.
	CodeUnknownField = "unknown_field"
	// CodeMissingField: a required member is absent.
	CodeMissingField = "missing_field"
	// CodeWrongType: the member has the wrong JSON type.
	CodeWrongType = "wrong_type"
	// CodeInvalidValue: the member has the right type but a value outside
	// its enumeration, pattern or bounds.
	CodeInvalidValue = "invalid_value"
	// CodeUnsupportedVersion: schema_version is a number other than
	// SchemaVersion.
	CodeUnsupportedVersion = "unsupported_schema_version"
	// CodePredicateMismatch: the envelope names a Gatehouse predicate but
	// disagrees with the provider, operation, confidence, authority or
	// evidence links the spec fixes for it.
	CodePredicateMismatch = "predicate_mismatch"
	// CodeNotCanonicalizable: RFC 8785 canonicalization of the envelope
	// failed.
	CodeNotCanonicalizable = "not_canonicalizable"
	// CodeIDMismatch: evidence_id is well formed but differs from the one
	// recomputed from the envelope (the record was altered or mis-sealed).
	CodeIDMismatch = "evidence_id_mismatch"
	// CodeTooManyIssues: more than MaxIssues problems were found; the rest
	// are not reported.
	CodeTooManyIssues = "too_many_issues"
)

// Issue is one problem found in an envelope. Code is one of the Code
// constants; Path is a JSON path from the root "$" ("$.provider.id",
// "$.limitations[2]", `$["odd key"]`; keys longer than 64 bytes are
// shortened and marked with "…"); Message is for people and never echoes
// more than a short excerpt of the input. String formats it as
// "code at path: message".
type Issue = strictjson.Issue

// IssueList is a non-empty list of issues used as an error (Seal wraps one);
// retrieve it with errors.As.
type IssueList []Issue

// Error lists the first few issues and how many there are in all.
func (l IssueList) Error() string { return strictjson.ErrorText("", l) }

// decodeOptions make strictjson read an envelope as Parse documents it:
// duplicates, unpaired surrogates and inexact numbers are reported while
// the token stream is decoded, and every member of the envelope object is
// kept (repeated names included) with the span of its text, so that each is
// checked against the schema; nothing deeper is kept in the tree.
var decodeOptions = strictjson.Options{
	MaxDepth:       MaxDepth,
	Surrogates:     true,
	ExactNumbers:   true,
	KeepDuplicates: true,
	TreeDepth:      2,
	RootObject:     true,
	Codes:          strictjson.Codes{Trailing: CodeTrailingData},
	Wording: strictjson.Wording{
		Detailed:  true,
		Trailing:  "data follows the envelope object at byte offset %d",
		NotObject: "an envelope is a single JSON object",
	},
}

// Parse reads one Evidence v2 envelope. It is strict: the input must be at
// most MaxEnvelopeBytes of valid UTF-8 holding exactly one JSON object
// (nothing but whitespace after it) nested at most MaxDepth deep, with no
// duplicate member names at any depth, no unpaired surrogate escapes, and
// only numbers that RFC 8785 represents exactly; the envelope must have every
// field of Envelope, no others, each with its JSON type and allowed values;
// Gatehouse predicates must carry the values the spec fixes for them; and
// evidence_id must equal ComputeID of the parsed envelope.
//
// Size is checked first; nesting, duplicates, strings and numbers are
// checked by the shared strict decoder (backend/internal/strictjson) while
// it reads a token stream, so nesting beyond MaxDepth stops decoding before
// it recurses further, and no tree is built below the envelope's members
// but for the small ones read field by field (subject, provider,
// environment and the three lists), which strictjson's Checker then reads;
// the canonicalization that recomputes the evidence_id builds its own,
// after those checks pass.
//
// Parse returns either the envelope and no issues, or nil and every issue
// found (at most MaxIssues), each naming its JSON path. A malformed document
// (bad syntax, too deep) is reported at the failing path and stops the check
// there; the evidence_id is recomputed only when nothing else is wrong. The
// returned envelope shares no memory with data. Parse never panics, whatever
// data holds.
func Parse(data []byte) (*Envelope, []Issue) { return parse(data, true, nil) }

// parse is Parse; without checkID it does not recompute the evidence_id
// (SealJSON has just computed it from the same envelope). memo, when set,
// may hold the canonical form of the normalized result's bytes (id.go);
// data is then seal's own, and the envelope's raw messages share it
// instead of copying megabytes.
func parse(data []byte, checkID bool, memo *canonicalMemo) (*Envelope, []Issue) {
	if len(data) > MaxEnvelopeBytes {
		return nil, []Issue{{Code: CodeTooLarge, Path: "$", Message: fmt.Sprintf("envelope is %d bytes; the limit is %d bytes", len(data), MaxEnvelopeBytes)}}
	}
	if !utf8.Valid(data) {
		return nil, []Issue{{Code: CodeInvalidUTF8, Path: "$", Message: fmt.Sprintf("input is not valid UTF-8 (first bad byte at offset %d)", strictjson.FirstInvalidUTF8(data))}}
	}
	p := &parser{issues: strictjson.Collector{Max: MaxIssues, MarkOnOverflow: true}}
	p.check.Issues = &p.issues
	root := strictjson.Decode(data, "$", decodeOptions, &p.issues)
	if root == nil || p.issues.Full() {
		return nil, p.issues.List
	}
	for i, k := range root.Keys {
		v := root.Vals[i]
		p.members = append(p.members, member{k, v, data[v.Off:v.End]})
	}
	e := p.envelope()
	if !p.issues.Empty() {
		return nil, p.issues.List
	}
	if !checkID {
		return e, nil
	}
	id, err := computeID(e, memo)
	if err != nil {
		p.addAt("$", CodeNotCanonicalizable, strictjson.Truncate(err.Error(), 200))
		return nil, p.issues.List
	}
	if id != e.EvidenceID {
		p.addAt("$.evidence_id", CodeIDMismatch, fmt.Sprintf("evidence_id %s does not match the envelope, which hashes to %s", e.EvidenceID, id))
		return nil, p.issues.List
	}
	if memo == nil {
		cloneRaw(e)
	}
	return e, nil
}

type member struct {
	key string
	val *strictjson.Node // no children when it is a container (TreeDepth)
	raw []byte
}

type parser struct {
	issues  strictjson.Collector
	check   strictjson.Checker
	members []member // the envelope's members in document order
}

func (p *parser) addAt(path, code, msg string) { p.issues.Add(path, code, "%s", msg) }

// envelopeFields lists the envelope fields in the order of the spec, which
// is also the order of the issues reported for them.
func envelopeFields() []string {
	return []string{
		"schema_version", "evidence_id", "subject", "provider", "predicate_type", "operation",
		"parameters", "raw_result", "normalized_result", "confidence", "authority",
		"environment", "limitations", "locations", "evidence_links",
	}
}

// envelope checks the members collected by the token walk against the
// envelope schema and returns the typed envelope (meaningful only when no
// issue was added).
func (p *parser) envelope() *Envelope {
	names := envelopeFields()
	known := make(map[string]bool, len(names))
	for _, f := range names {
		known[f] = true
	}
	fields := make(map[string]member, len(p.members))
	for _, m := range p.members {
		if !known[m.key] {
			p.addAt("$"+strictjson.KeyPath(m.key), CodeUnknownField, "not an Evidence v2 envelope field")
			continue
		}
		if _, dup := fields[m.key]; !dup {
			fields[m.key] = m
		}
	}
	e := &Envelope{}
	for _, name := range names {
		m, ok := fields[name]
		path := "$." + name
		if !ok {
			p.addAt(path, CodeMissingField, "required field is missing")
			continue
		}
		v, raw := m.val, m.raw
		switch name {
		case "schema_version":
			e.SchemaVersion = p.schemaVersion(path, v)
		case "evidence_id":
			if s, ok := p.str(path, v, true); ok {
				if !ValidID(s) {
					p.addAt(path, CodeInvalidValue, `must be "ev_" followed by 64 lowercase hexadecimal characters`)
				}
				e.EvidenceID = s
			}
		case "subject":
			e.Subject = p.subject(path, p.tree(path, m))
		case "provider":
			if f, ok := p.fields(path, p.tree(path, m), "id", "name", "version"); ok {
				e.Provider.ID, _ = p.str(path+".id", f["id"], true)
				e.Provider.Name, _ = p.str(path+".name", f["name"], true)
				e.Provider.Version, _ = p.str(path+".version", f["version"], true)
			}
		case "predicate_type":
			e.PredicateType, _ = p.str(path, v, true)
		case "operation":
			e.Operation, _ = p.str(path, v, true)
		case "parameters":
			if p.kind(path, v, strictjson.Object) {
				e.Parameters = raw
			}
		case "raw_result":
			e.RawResult = raw
		case "normalized_result":
			e.NormalizedResult = raw
		case "confidence":
			if s, ok := p.str(path, v, false); ok {
				e.Confidence = Confidence(s)
				if !e.Confidence.Valid() {
					p.addAt(path, CodeInvalidValue, "must be observed, derived or inferred")
				}
			}
		case "authority":
			if s, ok := p.str(path, v, false); ok {
				e.Authority = Authority(s)
				if !e.Authority.Valid() {
					p.addAt(path, CodeInvalidValue, "must be shipped-artifact, controlled-replay, historical-reference, external-service or analyst-inference")
				}
			}
		case "environment":
			e.Environment = p.environment(path, p.tree(path, m))
		case "limitations":
			e.Limitations = []string{}
			for i, it := range p.array(path, p.tree(path, m)) {
				s, _ := p.str(path+strictjson.IndexPath(i), it, true)
				e.Limitations = append(e.Limitations, s)
			}
		case "locations":
			e.Locations = []json.RawMessage{}
			for i, it := range p.array(path, p.tree(path, m)) {
				p.kind(path+strictjson.IndexPath(i), it, strictjson.Object)
				e.Locations = append(e.Locations, raw[it.Off:it.End])
			}
		case "evidence_links":
			e.EvidenceLinks = []string{}
			for i, it := range p.array(path, p.tree(path, m)) {
				ip := path + strictjson.IndexPath(i)
				if s, ok := p.str(ip, it, false); ok {
					if !ValidID(s) {
						p.addAt(ip, CodeInvalidValue, `an evidence link is an evidence_id: "ev_" followed by 64 lowercase hexadecimal characters`)
					}
					e.EvidenceLinks = append(e.EvidenceLinks, s)
				}
			}
		}
	}
	if p.issues.Empty() {
		p.predicate(e)
	}
	return e
}

// predicate enforces the values docs/formats/capture-record.md fixes for Gatehouse's
// own predicates.
func (p *parser) predicate(e *Envelope) {
	want := func(path string, ok bool, msg string) {
		if !ok {
			p.addAt(path, CodePredicateMismatch, msg)
		}
	}
	switch e.PredicateType {
	case PredicateProcessCapture:
		want("$.provider.id", e.Provider.ID == ProcessProviderID, "capture Evidence comes from provider "+ProcessProviderID)
		want("$.operation", e.Operation == OperationCaptureProcess, "capture Evidence has operation "+OperationCaptureProcess)
		want("$.confidence", e.Confidence == Observed, "capture Evidence is observed")
		want("$.authority", e.Authority == AuthorityControlledReplay, "capture Evidence has authority controlled-replay")
	case PredicateProcessComparison, PredicateProcessComparisonTrace:
		want("$.operation", e.Operation == OperationCompareProcesses, "comparison Evidence has operation "+OperationCompareProcesses)
		want("$.confidence", e.Confidence == Derived, "comparison Evidence is derived")
		want("$.authority", e.Authority == AuthorityAnalystInference, "comparison Evidence has authority analyst-inference")
		want("$.evidence_links", len(e.EvidenceLinks) == 2, "comparison Evidence links exactly [left, right]")
	}
}

func (p *parser) schemaVersion(path string, v *strictjson.Node) int {
	if !p.kind(path, v, strictjson.Number) {
		return 0
	}
	f, err := strconv.ParseFloat(v.Str, 64)
	if err != nil || f != SchemaVersion {
		p.addAt(path, CodeUnsupportedVersion, fmt.Sprintf("schema_version must be %d", SchemaVersion))
		return 0
	}
	return SchemaVersion
}

func (p *parser) subject(path string, v *strictjson.Node) *Subject {
	if v.Kind == strictjson.Null {
		return nil
	}
	m, ok := p.fields(path, v, "name", "digest", "format", "architecture", "local_path")
	if !ok {
		return nil
	}
	s := &Subject{}
	s.Name, _ = p.str(path+".name", m["name"], true)
	if d, ok := p.fields(path+".digest", m["digest"], "sha256"); ok {
		dp := path + ".digest.sha256"
		if h, ok := p.str(dp, d["sha256"], false); ok {
			if !strictjson.IsHex64(h) {
				p.addAt(dp, CodeInvalidValue, "must be 64 lowercase hexadecimal characters")
			}
			s.Digest.SHA256 = h
		}
	}
	s.Format, _ = p.str(path+".format", m["format"], true)
	s.Architecture, _ = p.str(path+".architecture", m["architecture"], true)
	s.LocalPath, _ = p.str(path+".local_path", m["local_path"], false)
	return s
}

func (p *parser) environment(path string, v *strictjson.Node) *Environment {
	if v.Kind == strictjson.Null {
		return nil
	}
	m, ok := p.fields(path, v, "id", "platform", "architecture", "isolation")
	if !ok {
		return nil
	}
	env := &Environment{}
	env.ID, _ = p.str(path+".id", m["id"], true)
	env.Platform, _ = p.str(path+".platform", m["platform"], true)
	env.Architecture, _ = p.str(path+".architecture", m["architecture"], true)
	if s, ok := p.str(path+".isolation", m["isolation"], false); ok {
		env.Isolation = Isolation(s)
		if !env.Isolation.Valid() {
			p.addAt(path+".isolation", CodeInvalidValue, "must be none, process, container or virtual-machine")
		}
	}
	return env
}

// tree returns the whole value of an envelope member. The envelope's own
// decoding keeps no children below its members, so that a large
// raw_result or normalized_result builds no tree; the few members read
// field by field are decoded again from their text, which the first pass
// has already checked in full (nothing new can be reported).
func (p *parser) tree(path string, m member) *strictjson.Node {
	if m.val.Kind != strictjson.Object && m.val.Kind != strictjson.Array {
		return m.val
	}
	opt := decodeOptions
	opt.TreeDepth, opt.RootObject = 0, false
	opt.MaxDepth = MaxDepth - 1
	var again strictjson.Collector // what the first pass reported already
	if n := strictjson.Decode(m.raw, path, opt, &again); n != nil {
		return n
	}
	return &strictjson.Node{Kind: strictjson.Null}
}

// fields checks that v is an object with exactly the named members and
// returns them (strictjson.Checker.Object). Missing members are reported
// and absent from the map; callers pass nil values on to the typed checks,
// which ignore them.
func (p *parser) fields(path string, v *strictjson.Node, names ...string) (strictjson.Members, bool) {
	if v == nil {
		return nil, false
	}
	m, _ := p.check.Object(v, path, names...)
	if m == nil {
		return nil, false
	}
	for _, n := range names {
		if _, ok := m[n]; !ok {
			p.addAt(path+"."+n, CodeMissingField, "required field is missing")
		}
	}
	return m, true
}

// array checks that v is an array and returns its elements.
func (p *parser) array(path string, v *strictjson.Node) []*strictjson.Node {
	elems, _ := p.check.Array(v, path, 0, math.MaxInt)
	return elems
}

// str checks that v (when present) is a string, non-empty if required,
// and returns it.
func (p *parser) str(path string, v *strictjson.Node, nonEmpty bool) (string, bool) {
	if v == nil {
		return "", false
	}
	s, ok := p.check.Str(v, path)
	if !ok {
		return "", false
	}
	if nonEmpty && s == "" {
		p.addAt(path, CodeInvalidValue, "must not be empty")
		return s, false
	}
	return s, true
}

// kind checks the JSON type of v and reports a mismatch.
func (p *parser) kind(path string, v *strictjson.Node, want strictjson.Kind) bool {
	if v.Kind != want {
		p.addAt(path, CodeWrongType, fmt.Sprintf("must be %s, not %s", want, v.Kind))
		return false
	}
	return true
}

// cloneRaw gives the envelope's raw messages their own memory.
func cloneRaw(e *Envelope) {
	e.Parameters = bytes.Clone(e.Parameters)
	e.RawResult = bytes.Clone(e.RawResult)
	e.NormalizedResult = bytes.Clone(e.NormalizedResult)
	for i := range e.Locations {
		e.Locations[i] = bytes.Clone(e.Locations[i])
	}
}

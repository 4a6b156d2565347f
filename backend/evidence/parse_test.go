package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// envelopeMap returns a sealed capture envelope as a generic JSON object to
// be broken by a test case.
func envelopeMap(t *testing.T) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(sealed(t, sampleCapture())))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func obj(m map[string]any, key string) map[string]any { return m[key].(map[string]any) }

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func expectIssue(t *testing.T, data []byte, code, path string) []Issue {
	t.Helper()
	got, issues := Parse(data)
	if got != nil || len(issues) == 0 {
		t.Fatalf("Parse accepted %s", strictjson.Truncate(string(data), 300))
	}
	if !hasIssue(issues, code, path) {
		t.Fatalf("issues %v lack %s at %s", issues, code, path)
	}
	for _, i := range issues {
		if i.Code == "" || !strings.HasPrefix(i.Path, "$") || i.Message == "" {
			t.Fatalf("incomplete issue %+v", i)
		}
	}
	return issues
}

func TestParseMissingFields(t *testing.T) {
	for _, f := range envelopeFields() {
		t.Run(f, func(t *testing.T) {
			m := envelopeMap(t)
			delete(m, f)
			issues := expectIssue(t, encode(t, m), CodeMissingField, "$."+f)
			if len(issues) != 1 {
				t.Errorf("more issues than the missing field: %v", issues)
			}
		})
	}
	nested := map[string]func(map[string]any){
		"$.provider.id":           func(m map[string]any) { delete(obj(m, "provider"), "id") },
		"$.provider.name":         func(m map[string]any) { delete(obj(m, "provider"), "name") },
		"$.provider.version":      func(m map[string]any) { delete(obj(m, "provider"), "version") },
		"$.subject.name":          func(m map[string]any) { delete(obj(m, "subject"), "name") },
		"$.subject.digest":        func(m map[string]any) { delete(obj(m, "subject"), "digest") },
		"$.subject.digest.sha256": func(m map[string]any) { delete(obj(obj(m, "subject"), "digest"), "sha256") },
		"$.subject.format":        func(m map[string]any) { delete(obj(m, "subject"), "format") },
		"$.subject.architecture":  func(m map[string]any) { delete(obj(m, "subject"), "architecture") },
		"$.subject.local_path":    func(m map[string]any) { delete(obj(m, "subject"), "local_path") },
		"$.environment.id":        func(m map[string]any) { delete(obj(m, "environment"), "id") },
		"$.environment.platform":  func(m map[string]any) { delete(obj(m, "environment"), "platform") },
		"$.environment.isolation": func(m map[string]any) { delete(obj(m, "environment"), "isolation") },
		"$.environment.architecture": func(m map[string]any) {
			delete(obj(m, "environment"), "architecture")
		},
	}
	for path, mutate := range nested {
		t.Run(path, func(t *testing.T) {
			m := envelopeMap(t)
			mutate(m)
			expectIssue(t, encode(t, m), CodeMissingField, path)
		})
	}
}

func TestParseFieldRules(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(m map[string]any)
		code   string
		path   string
	}{
		{"unknown top-level field", func(m map[string]any) { m["extra"] = 1 }, CodeUnknownField, "$.extra"},
		{"unknown field quoted path", func(m map[string]any) { m["a b"] = 1 }, CodeUnknownField, `$["a b"]`},
		{"unknown provider field", func(m map[string]any) { obj(m, "provider")["uri"] = "x" }, CodeUnknownField, "$.provider.uri"},
		{"unknown subject field", func(m map[string]any) { obj(m, "subject")["size"] = 1 }, CodeUnknownField, "$.subject.size"},
		{"unknown digest field", func(m map[string]any) { obj(obj(m, "subject"), "digest")["sha512"] = "x" }, CodeUnknownField, "$.subject.digest.sha512"},
		{"unknown environment field", func(m map[string]any) { obj(m, "environment")["kernel"] = "x" }, CodeUnknownField, "$.environment.kernel"},

		{"schema_version string", func(m map[string]any) { m["schema_version"] = "2" }, CodeWrongType, "$.schema_version"},
		{"schema_version 1", func(m map[string]any) { m["schema_version"] = 1 }, CodeUnsupportedVersion, "$.schema_version"},
		{"schema_version 3", func(m map[string]any) { m["schema_version"] = 3 }, CodeUnsupportedVersion, "$.schema_version"},
		{"schema_version 2.5", func(m map[string]any) { m["schema_version"] = 2.5 }, CodeUnsupportedVersion, "$.schema_version"},
		{"evidence_id number", func(m map[string]any) { m["evidence_id"] = 7 }, CodeWrongType, "$.evidence_id"},
		{"evidence_id empty", func(m map[string]any) { m["evidence_id"] = "" }, CodeInvalidValue, "$.evidence_id"},
		{"evidence_id short", func(m map[string]any) { m["evidence_id"] = "ev_abc" }, CodeInvalidValue, "$.evidence_id"},
		{"evidence_id upper hex", func(m map[string]any) { m["evidence_id"] = "ev_" + strings.Repeat("A", 64) }, CodeInvalidValue, "$.evidence_id"},
		{"evidence_id prefix", func(m map[string]any) { m["evidence_id"] = "ex_" + strings.Repeat("a", 64) }, CodeInvalidValue, "$.evidence_id"},
		{"subject string", func(m map[string]any) { m["subject"] = "node" }, CodeWrongType, "$.subject"},
		{"subject array", func(m map[string]any) { m["subject"] = []any{} }, CodeWrongType, "$.subject"},
		{"subject name empty", func(m map[string]any) { obj(m, "subject")["name"] = "" }, CodeInvalidValue, "$.subject.name"},
		{"subject digest string", func(m map[string]any) { obj(m, "subject")["digest"] = "abc" }, CodeWrongType, "$.subject.digest"},
		{"subject sha256 upper", func(m map[string]any) { obj(obj(m, "subject"), "digest")["sha256"] = strings.Repeat("AB", 32) }, CodeInvalidValue, "$.subject.digest.sha256"},
		{"subject sha256 short", func(m map[string]any) { obj(obj(m, "subject"), "digest")["sha256"] = "ab" }, CodeInvalidValue, "$.subject.digest.sha256"},
		{"subject format null", func(m map[string]any) { obj(m, "subject")["format"] = nil }, CodeWrongType, "$.subject.format"},
		{"subject architecture empty", func(m map[string]any) { obj(m, "subject")["architecture"] = "" }, CodeInvalidValue, "$.subject.architecture"},
		{"subject local_path number", func(m map[string]any) { obj(m, "subject")["local_path"] = 1 }, CodeWrongType, "$.subject.local_path"},
		{"provider null", func(m map[string]any) { m["provider"] = nil }, CodeWrongType, "$.provider"},
		{"provider id null", func(m map[string]any) { obj(m, "provider")["id"] = nil }, CodeWrongType, "$.provider.id"},
		{"provider name empty", func(m map[string]any) { obj(m, "provider")["name"] = "" }, CodeInvalidValue, "$.provider.name"},
		{"provider version number", func(m map[string]any) { obj(m, "provider")["version"] = 4 }, CodeWrongType, "$.provider.version"},
		{"predicate_type number", func(m map[string]any) { m["predicate_type"] = 1 }, CodeWrongType, "$.predicate_type"},
		{"predicate_type empty", func(m map[string]any) { m["predicate_type"] = "" }, CodeInvalidValue, "$.predicate_type"},
		{"operation empty", func(m map[string]any) { m["operation"] = "" }, CodeInvalidValue, "$.operation"},
		{"parameters array", func(m map[string]any) { m["parameters"] = []any{} }, CodeWrongType, "$.parameters"},
		{"parameters null", func(m map[string]any) { m["parameters"] = nil }, CodeWrongType, "$.parameters"},
		{"confidence bool", func(m map[string]any) { m["confidence"] = true }, CodeWrongType, "$.confidence"},
		{"confidence value", func(m map[string]any) { m["confidence"] = "certain" }, CodeInvalidValue, "$.confidence"},
		{"authority value", func(m map[string]any) { m["authority"] = "user" }, CodeInvalidValue, "$.authority"},
		{"authority case", func(m map[string]any) { m["authority"] = "Controlled-Replay" }, CodeInvalidValue, "$.authority"},
		{"environment string", func(m map[string]any) { m["environment"] = "linux" }, CodeWrongType, "$.environment"},
		{"environment id empty", func(m map[string]any) { obj(m, "environment")["id"] = "" }, CodeInvalidValue, "$.environment.id"},
		{"environment isolation", func(m map[string]any) { obj(m, "environment")["isolation"] = "vm" }, CodeInvalidValue, "$.environment.isolation"},
		{"environment isolation type", func(m map[string]any) { obj(m, "environment")["isolation"] = 1 }, CodeWrongType, "$.environment.isolation"},
		{"limitations object", func(m map[string]any) { m["limitations"] = map[string]any{} }, CodeWrongType, "$.limitations"},
		{"limitations null", func(m map[string]any) { m["limitations"] = nil }, CodeWrongType, "$.limitations"},
		{"limitation number", func(m map[string]any) { m["limitations"] = []any{"ok", 1} }, CodeWrongType, "$.limitations[1]"},
		{"limitation empty", func(m map[string]any) { m["limitations"] = []any{""} }, CodeInvalidValue, "$.limitations[0]"},
		{"locations string", func(m map[string]any) { m["locations"] = "x" }, CodeWrongType, "$.locations"},
		{"location string", func(m map[string]any) { m["locations"] = []any{map[string]any{}, "x"} }, CodeWrongType, "$.locations[1]"},
		{"evidence_links object", func(m map[string]any) { m["evidence_links"] = map[string]any{} }, CodeWrongType, "$.evidence_links"},
		{"evidence link number", func(m map[string]any) { m["evidence_links"] = []any{1} }, CodeWrongType, "$.evidence_links[0]"},
		{"evidence link malformed", func(m map[string]any) { m["evidence_links"] = []any{leftID, "ev_1"} }, CodeInvalidValue, "$.evidence_links[1]"},

		{"capture provider", func(m map[string]any) { obj(m, "provider")["id"] = "other" }, CodePredicateMismatch, "$.provider.id"},
		{"capture operation", func(m map[string]any) { m["operation"] = OperationCompareProcesses }, CodePredicateMismatch, "$.operation"},
		{"capture confidence", func(m map[string]any) { m["confidence"] = string(Derived) }, CodePredicateMismatch, "$.confidence"},
		{"capture authority", func(m map[string]any) { m["authority"] = string(AuthorityAnalystInference) }, CodePredicateMismatch, "$.authority"},
		{"comparison links", func(m map[string]any) {
			m["predicate_type"] = PredicateProcessComparisonTrace
			m["operation"] = OperationCompareProcesses
			m["confidence"] = string(Derived)
			m["authority"] = string(AuthorityAnalystInference)
			m["evidence_links"] = []any{leftID}
		}, CodePredicateMismatch, "$.evidence_links"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := envelopeMap(t)
			c.mutate(m)
			expectIssue(t, encode(t, m), c.code, c.path)
		})
	}
}

// sealedString returns the sealed sample capture as a string for textual
// edits.
func sealedString(t *testing.T) string { return string(sealed(t, sampleCapture())) }

func TestParseDocumentRules(t *testing.T) {
	doc := sealedString(t)
	nr := `"normalized_result":{`
	if !strings.Contains(doc, nr) || !strings.Contains(doc, `"provider":{`) {
		t.Fatal("sample layout changed")
	}
	inNR := func(member string) []byte { return []byte(strings.Replace(doc, nr, nr+member+",", 1)) }
	cases := []struct {
		name string
		data []byte
		code string
		path string
	}{
		{"empty input", []byte(``), CodeInvalidJSON, "$"},
		{"array", []byte(`[]`), CodeNotObject, "$"},
		{"string", []byte(`"ev"`), CodeNotObject, "$"},
		{"null", []byte(`null`), CodeNotObject, "$"},
		{"two objects", []byte(doc + doc), CodeTrailingData, "$"},
		{"trailing garbage", []byte(doc + " x"), CodeTrailingData, "$"},
		{"trailing comma", []byte(strings.Replace(doc, `"evidence_links":[]}`, `"evidence_links":[],}`, 1)), CodeInvalidJSON, "$"},
		{"truncated", []byte(doc[:strings.Index(doc, "All set!")+3]), CodeInvalidJSON, "$.normalized_result.frames[0].data"},
		{"missing value", []byte(strings.Replace(doc, `"operation":"`, `"operation":,"x":"`, 1)), CodeInvalidJSON, "$.operation"},
		{"byte order mark", append([]byte("\ufeff"), doc...), CodeInvalidJSON, "$"},
		{"invalid UTF-8", []byte(strings.Replace(doc, "All set!", "All \xff set!", 1)), CodeInvalidUTF8, "$"},
		{"UTF-8 surrogate", []byte(strings.Replace(doc, "All set!", "All \xed\xa0\x80 set!", 1)), CodeInvalidUTF8, "$"},
		{"duplicate top-level key", []byte(strings.Replace(doc, `{"schema_version":2,`, `{"schema_version":2,"schema_version":2,`, 1)), CodeDuplicateKey, "$.schema_version"},
		{"duplicate nested key", []byte(strings.Replace(doc, `"provider":{`, `"provider":{"id":"x",`, 1)), CodeDuplicateKey, "$.provider.id"},
		{"duplicate key in open part", inNR(`"k":1,"k":1`), CodeDuplicateKey, "$.normalized_result.k"},
		{"duplicate key by escape", inNR(`"k":1,"\u006b":1`), CodeDuplicateKey, "$.normalized_result.k"},
		{"lone high surrogate", inNR(`"s":"a\ud800b"`), CodeInvalidString, "$.normalized_result.s"},
		{"lone low surrogate", inNR(`"s":["\udc00"]`), CodeInvalidString, "$.normalized_result.s[0]"},
		{"reversed surrogates", inNR(`"s":"\udc00\ud800"`), CodeInvalidString, "$.normalized_result.s"},
		{"high then non-low", inNR(`"s":"\ud800\u0041"`), CodeInvalidString, "$.normalized_result.s"},
		{"surrogate in key", inNR(`"\ud800":1`), CodeInvalidString, "$.normalized_result[\"\ufffd\"]"},
		{"unsafe integer", inNR(`"n":9007199254740993`), CodeInexactNumber, "$.normalized_result.n"},
		{"too precise decimal", inNR(`"n":[0,0.10000000000000000001]`), CodeInexactNumber, "$.normalized_result.n[1]"},
		{"overflow", inNR(`"n":{"m":1e400}`), CodeInexactNumber, "$.normalized_result.n.m"},
		{"underflow", inNR(`"n":1e-400`), CodeInexactNumber, "$.normalized_result.n"},
		{"too large", append([]byte(doc), bytes.Repeat([]byte(" "), MaxEnvelopeBytes+1-len(doc))...), CodeTooLarge, "$"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { expectIssue(t, c.data, c.code, c.path) })
	}

	// Exact numbers in any spelling are accepted and hash like their
	// canonical form.
	for n, canonical := range map[string]string{
		`9007199254740992`: `9007199254740992`, `-0`: `0`, `1E21`: `1e+21`, `0.1`: `0.1`,
		`5e-324`: `5e-324`, `1.7976931348623157e308`: `1.7976931348623157e+308`, `100e-2`: `1`,
	} {
		spelled, canon := sampleCapture(), sampleCapture()
		spelled.NormalizedResult = json.RawMessage(`{"n":` + n + `}`)
		canon.NormalizedResult = json.RawMessage(`{"n":` + canonical + `}`)
		data := sealed(t, spelled)
		sealed(t, canon)
		if !bytes.Contains(data, []byte(`{"n":`+n+`}`)) || mustParse(t, data).EvidenceID != canon.EvidenceID {
			t.Errorf("number %s: id %s, canonical %s id %s", n, spelled.EvidenceID, canonical, canon.EvidenceID)
		}
	}

	// A whitespace-padded envelope of exactly MaxEnvelopeBytes is accepted.
	atLimit := append([]byte(doc), bytes.Repeat([]byte(" "), MaxEnvelopeBytes-len(doc))...)
	mustParse(t, atLimit)
}

func TestParseDepthLimit(t *testing.T) {
	nest := func(n int) json.RawMessage {
		return json.RawMessage(strings.Repeat("[", n) + strings.Repeat("]", n))
	}
	// normalized_result sits at depth 2, so n nested arrays reach depth n+1.
	e := sampleCapture()
	e.NormalizedResult = nest(MaxDepth - 1)
	mustParse(t, sealed(t, e))

	e = sampleCapture()
	e.NormalizedResult = json.RawMessage("null")
	doc := string(sealed(t, e))
	deep := strings.Replace(doc, `"normalized_result":null`, `"normalized_result":`+string(nest(MaxDepth)), 1)
	path := "$.normalized_result" + strings.Repeat("[0]", MaxDepth-1)
	issues := expectIssue(t, []byte(deep), CodeTooDeep, path)
	if len(issues) != 1 {
		t.Fatalf("issues %v", issues)
	}
	// A very deep document is stopped early, not parsed.
	huge := strings.Replace(doc, `"normalized_result":null`, `"normalized_result":`+strings.Repeat(`{"a":`, 1<<20), 1)
	expectIssue(t, []byte(huge), CodeTooDeep, "$.normalized_result"+strings.Repeat(".a", MaxDepth-1))
}

func TestParseReportsEveryPath(t *testing.T) {
	m := envelopeMap(t)
	delete(m, "operation")
	m["extra"] = true
	obj(m, "provider")["id"] = 3
	obj(m, "environment")["isolation"] = "jail"
	m["limitations"] = []any{"ok", "", 5}
	m["evidence_links"] = []any{"nope"}
	data := []byte(strings.Replace(string(encode(t, m)), `"normalized_result":{`, `"normalized_result":{"d":1,"d":2,"n":1e999,`, 1))
	_, issues := Parse(data)
	want := []struct{ code, path string }{
		{CodeDuplicateKey, "$.normalized_result.d"},
		{CodeInexactNumber, "$.normalized_result.n"},
		{CodeUnknownField, "$.extra"},
		{CodeMissingField, "$.operation"},
		{CodeWrongType, "$.provider.id"},
		{CodeInvalidValue, "$.environment.isolation"},
		{CodeInvalidValue, "$.limitations[1]"},
		{CodeWrongType, "$.limitations[2]"},
		{CodeInvalidValue, "$.evidence_links[0]"},
	}
	if len(issues) != len(want) {
		t.Fatalf("got %d issues, want %d: %v", len(issues), len(want), issues)
	}
	for _, w := range want {
		if !hasIssue(issues, w.code, w.path) {
			t.Errorf("missing %s at %s in %v", w.code, w.path, issues)
		}
	}
	err := IssueList(issues).Error()
	if !strings.HasPrefix(err, "9 issue(s); ") || !strings.Contains(err, "and 4 more") {
		t.Errorf("IssueList.Error() = %s", err)
	}
}

func TestParseIssueBound(t *testing.T) {
	withUnknown := func(n int) []byte {
		m := envelopeMap(t)
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("x%03d", i)] = i
		}
		return encode(t, m)
	}
	_, issues := Parse(withUnknown(MaxIssues))
	if len(issues) != MaxIssues || issues[MaxIssues-1].Code != CodeUnknownField {
		t.Fatalf("exactly %d issues: got %d, last %+v", MaxIssues, len(issues), issues[len(issues)-1])
	}
	_, issues = Parse(withUnknown(MaxIssues + 1))
	if len(issues) != MaxIssues || issues[MaxIssues-1].Code != CodeTooManyIssues {
		t.Fatalf("%d issues: got %d, last %+v", MaxIssues+1, len(issues), issues[len(issues)-1])
	}
	// The token walk stops once the list is full.
	doc := sealedString(t)
	var dups strings.Builder
	for i := 0; i < 100000; i++ {
		dups.WriteString(`"k":0,`)
	}
	data := strings.Replace(doc, `"normalized_result":{`, `"normalized_result":{`+dups.String(), 1)
	_, issues = Parse([]byte(data))
	if len(issues) != MaxIssues || issues[MaxIssues-1].Code != CodeTooManyIssues || issues[0].Code != CodeDuplicateKey {
		t.Fatalf("got %d issues, first %+v last %+v", len(issues), issues[0], issues[len(issues)-1])
	}
}

func TestIssuePathsAreBounded(t *testing.T) {
	long := strings.Repeat("k", 10000)
	m := envelopeMap(t)
	m[long] = 1
	m["é"] = 1
	_, issues := Parse(encode(t, m))
	want := `$["` + strings.Repeat("k", 64) + `…"]`
	if !hasIssue(issues, CodeUnknownField, want) {
		t.Fatalf("issues %v lack a shortened path", issues)
	}
	if !hasIssue(issues, CodeUnknownField, `$["é"]`) {
		t.Fatalf("issues %v lack a quoted path", issues)
	}
}

// TestNestedIssuesReportedOnce: each problem inside a member read field by
// field is reported once, where it is — a missing object is missing, not
// also of the wrong type, and a repeated name below the envelope is not
// reported again when the member is read.
func TestNestedIssuesReportedOnce(t *testing.T) {
	m := envelopeMap(t)
	m["subject"] = map[string]any{"name": "n", "format": "f", "architecture": "a", "local_path": ""}
	_, issues := Parse(encode(t, m))
	if len(issues) != 1 || issues[0].Code != CodeMissingField || issues[0].Path != "$.subject.digest" {
		t.Fatalf("missing digest: %v", issues)
	}
	doc := sealedString(t)
	dup := strings.Replace(doc, `"provider":{`, `"provider":{"id":"x",`, 1)
	_, issues = Parse([]byte(dup))
	n := 0
	for _, is := range issues {
		if is.Code == CodeDuplicateKey {
			n++
			if is.Path != "$.provider.id" {
				t.Errorf("duplicate at %s", is.Path)
			}
		}
	}
	if n != 1 {
		t.Fatalf("duplicate reported %d times: %v", n, issues)
	}
}

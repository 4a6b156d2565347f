package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/store"
)

const rev1 = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
const rev2 = "sha256:2222222222222222222222222222222222222222222222222222222222222222"

type fixture struct {
	path  string
	db    *store.DB
	st    *Store
	clock time.Time
	key   []byte
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{path: filepath.Join(t.TempDir(), store.FileName), clock: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		key: []byte("0123456789abcdef0123456789abcdef")}
	f.reopen(t)
	return f
}

func (f *fixture) reopen(t *testing.T) {
	if f.db != nil {
		f.db.Close()
	}
	db, err := store.Open(f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f.db = db
	f.st = NewStore(db, func() time.Time { return f.clock }, f.key)
}

func scopeJSON(rev, agent, ws string, timeout, out int, extra string) string {
	return fmt.Sprintf(`{"revision":%q,"agentId":%q,"workspace":%q,"timeoutMsCeiling":%d,"maxOutputBytesCeiling":%d%s}`, rev, agent, ws, timeout, out, extra)
}

func policyJSON(mode string, scopes ...string) []byte {
	return []byte(fmt.Sprintf(`{"mode":%q,"safeMode":false,"trusted":[%s]}`, mode, strings.Join(scopes, ",")))
}

func (f *fixture) set(t *testing.T, data []byte) Execution {
	t.Helper()
	p, err := f.st.Set(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaultPolicyIsAsk(t *testing.T) {
	f := newFixture(t)
	p, err := f.st.Get(context.Background())
	if err != nil || p.Mode != ModeAsk || p.SafeMode || len(p.Trusted) != 0 {
		t.Fatalf("%+v %v", p, err)
	}
}

func TestReceipts(t *testing.T) {
	f := newFixture(t)
	a := scopeJSON(rev1, "local", "/work", 5000, 65536, "")
	b := scopeJSON(rev2, "agent-1", "/work", 5000, 65536, "")

	// Forged receipt: ignored, a server receipt is issued instead.
	forged := scopeJSON(rev1, "local", "/work", 5000, 65536, `,"receiptId":"forged","approvedAt":"2001-01-01T00:00:00Z"`)
	p := f.set(t, policyJSON("trusted_revisions", forged))
	r1 := *p.Trusted[0].ReceiptID
	if r1 == "forged" || !p.Trusted[0].ApprovedAt.Equal(f.clock) || !verifyReceipt(f.key, p.Trusted[0]) {
		t.Fatalf("forged receipt kept: %+v", p.Trusted[0])
	}

	// Draft in ask mode: no receipt for a new scope; the approved one keeps its own.
	f.clock = f.clock.Add(time.Hour)
	p = f.set(t, policyJSON("ask", a, b))
	if *p.Trusted[0].ReceiptID != r1 || p.Trusted[1].ReceiptID != nil || p.Trusted[1].ApprovedAt != nil {
		t.Fatalf("ask-mode save: %+v", p.Trusted)
	}

	// Unchanged scope keeps its receipt across a save and a restart.
	f.reopen(t)
	p = f.set(t, policyJSON("trusted_revisions", a, b))
	r2 := *p.Trusted[1].ReceiptID
	if *p.Trusted[0].ReceiptID != r1 || r2 == r1 {
		t.Fatalf("after restart: %+v", p.Trusted)
	}
	got, err := f.st.Get(context.Background())
	if err != nil || *got.Trusted[0].ReceiptID != r1 || !got.Trusted[1].ApprovedAt.Equal(f.clock) {
		t.Fatalf("stored: %+v %v", got.Trusted, err)
	}

	// Changed ceiling: new receipt.
	changed := scopeJSON(rev1, "local", "/work", 6000, 65536, "")
	p = f.set(t, policyJSON("trusted_revisions", changed, b))
	r3 := *p.Trusted[0].ReceiptID
	if r3 == r1 || *p.Trusted[1].ReceiptID != r2 {
		t.Fatalf("changed ceiling: %+v", p.Trusted)
	}

	// Removed, then re-added (in the same second): a new receipt, never the old one.
	f.set(t, policyJSON("trusted_revisions", b))
	p = f.set(t, policyJSON("trusted_revisions", changed, b))
	if r4 := *p.Trusted[0].ReceiptID; r4 == r3 || r4 == r1 {
		t.Fatalf("re-added: %+v", p.Trusted)
	}
}

// putRaw writes a stored policy value behind the Store's back, as someone
// with write access to the SQLite file could.
func (f *fixture) putRaw(t *testing.T, v string) {
	t.Helper()
	if err := f.db.Put(context.Background(), Namespace, ExecutionKey, json.RawMessage(v)); err != nil {
		t.Fatal(err)
	}
}

// TestStoredPolicyFailsClosed is the attacker's side of the stored policy:
// a receipt written into the database by hand, a genuine receipt moved to
// another scope, a receipt from another install's key, and corrupted or
// invalid values never yield an approved scope; Get fails with the reason.
func TestStoredPolicyFailsClosed(t *testing.T) {
	f := newFixture(t)
	genuine := f.set(t, policyJSON("trusted_revisions", scopeJSON(rev1, "local", "/w", 5000, 100, "")))
	id, at := *genuine.Trusted[0].ReceiptID, genuine.Trusted[0].ApprovedAt.Format(time.RFC3339)
	receipt := fmt.Sprintf(`,"receiptId":%q,"approvedAt":%q`, id, at)

	foreign, err := NewStore(f.db, nil, []byte("another install's key, 32 bytes")).Set(context.Background(), policyJSON("trusted_revisions", scopeJSON(rev2, "local", "/w", 5000, 100, "")))
	if err != nil {
		t.Fatal(err)
	}
	foreignReceipt := fmt.Sprintf(`,"receiptId":%q,"approvedAt":%q`, *foreign.Trusted[0].ReceiptID, foreign.Trusted[0].ApprovedAt.Format(time.RFC3339))

	cases := []struct{ name, value, path, code string }{
		{"hand-written uuid", string(policyJSON("trusted_revisions", scopeJSON(rev2, "local", "/w", 5000, 100,
			`,"receiptId":"6f1c2e4a-1111-4222-8333-444455556666","approvedAt":"2026-11-30T12:00:00Z"`))), "$.trusted[0].receiptId", "unverified_receipt"},
		{"genuine receipt moved to another revision", string(policyJSON("trusted_revisions", scopeJSON(rev2, "local", "/w", 5000, 100, receipt))), "$.trusted[0].receiptId", "unverified_receipt"},
		{"genuine receipt with a raised ceiling", string(policyJSON("trusted_revisions", scopeJSON(rev1, "local", "/w", 120000, 100, receipt))), "$.trusted[0].receiptId", "unverified_receipt"},
		{"genuine receipt with another approval time", string(policyJSON("trusted_revisions", scopeJSON(rev1, "local", "/w", 5000, 100,
			fmt.Sprintf(`,"receiptId":%q,"approvedAt":"2030-01-01T00:00:00Z"`, id)))), "$.trusted[0].receiptId", "unverified_receipt"},
		{"receipt of another install", string(policyJSON("trusted_revisions", scopeJSON(rev2, "local", "/w", 5000, 100, foreignReceipt))), "$.trusted[0].receiptId", "unverified_receipt"},
		{"receipt without a time", string(policyJSON("trusted_revisions", scopeJSON(rev1, "local", "/w", 5000, 100, fmt.Sprintf(`,"receiptId":%q`, id)))), "$.trusted[0]", "invalid_receipt"},
		{"not an object", `["trusted_revisions"]`, "$", "invalid_json"},
		{"wrong type", `{"mode":"ask","safeMode":"false","trusted":[]}`, "$.safeMode", "invalid_type"},
		{"unknown mode", `{"mode":"yolo","safeMode":false,"trusted":[]}`, "$.mode", "invalid_mode"},
		{"unknown field", `{"mode":"ask","safeMode":false,"trusted":[],"allowAll":true}`, "$.allowAll", "unknown_field"},
		{"relative workspace", string(policyJSON("trusted_revisions", scopeJSON(rev1, "local", "w", 5000, 100, receipt))), "$.trusted[0].workspace", "invalid_workspace"},
		{"safe mode missing", `{"mode":"ask","trusted":[]}`, "$.safeMode", "missing_field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.putRaw(t, c.value)
			p, err := f.st.Get(context.Background())
			var se *StoredPolicyError
			if !errors.As(err, &se) || se.Fields[0].Path != c.path || se.Fields[0].Code != c.code {
				t.Fatalf("Get = %+v, %v; want a stored-policy error %s at %s", p, err, c.code, c.path)
			}
			if !strings.Contains(err.Error(), "no script runs") {
				t.Fatalf("message %q does not say the policy fails closed", err)
			}
		})
	}
	// Saving a valid policy replaces the bad value; no receipt is carried
	// over from it.
	f.putRaw(t, cases[1].value)
	p := f.set(t, policyJSON("trusted_revisions", scopeJSON(rev2, "local", "/w", 5000, 100, "")))
	if *p.Trusted[0].ReceiptID == id {
		t.Fatal("a receipt of the invalid stored value was carried over")
	}
	// Without a key, nothing is approved and nothing can be issued.
	keyless := NewStore(f.db, nil, nil)
	if _, err := keyless.Get(context.Background()); err == nil {
		t.Fatal("a receipt verified without a key")
	}
	if _, err := keyless.Set(context.Background(), policyJSON("trusted_revisions", scopeJSON(rev1, "other", "/w", 5000, 100, ""))); err == nil {
		t.Fatal("a receipt was issued without a key")
	}
}

func TestLoadReceiptKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), ReceiptKeyFile)
	k1, err := LoadReceiptKey(path)
	if err != nil || len(k1) != 32 {
		t.Fatalf("create: %v (%d bytes)", err, len(k1))
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, %v", fi.Mode(), err)
	}
	k2, err := LoadReceiptKey(path)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("reload: %v, same %v", err, string(k1) == string(k2))
	}
	os.Chmod(path, 0o644)
	if _, err := LoadReceiptKey(path); err == nil {
		t.Fatal("a group/world-readable key was accepted")
	}
	os.Chmod(path, 0o600)
	os.WriteFile(path, []byte("short"), 0o600)
	if _, err := LoadReceiptKey(path); err == nil {
		t.Fatal("a short key was accepted")
	}
	link := filepath.Join(t.TempDir(), ReceiptKeyFile)
	os.Symlink(path, link)
	if _, err := LoadReceiptKey(link); err == nil {
		t.Fatal("a symlink key was accepted")
	}
}

func TestMalformedPolicyRejectedWholeWithoutChange(t *testing.T) {
	f := newFixture(t)
	good := f.set(t, policyJSON("trusted_revisions", scopeJSON(rev1, "local", "/w", 5000, 100, "")))
	var many []string
	for i := 0; i < MaxScopes; i++ {
		many = append(many, scopeJSON(rev1, fmt.Sprintf("agent-%d", i), "/w", 5000, 100, ""))
	}
	if _, err := ParseExecution(policyJSON("ask", many...)); err != nil {
		t.Fatalf("64 scopes: %v", err)
	}
	cases := []struct {
		doc  string
		path string
	}{
		{`{"mode":"ask","safeMode":false,"trusted":[],"extra":1}`, "$.extra"},
		{`{"mode":"ask","safeMode":false,"trusted":[],"odd key":1}`, `$["odd key"]`},
		{`{"mode":"ask","safeMode":false,"trusted":{}}`, "$.trusted"},
		{`{"mode":"ask","safeMode":false,"trusted":[1]}`, "$.trusted[0]"},
		{`{"mode":null,"safeMode":false}`, "$.mode"},
		{`{"mode":"sometimes","safeMode":false}`, "$.mode"},
		{`{"safeMode":false}`, "$.mode"},
		{`{"mode":"ask"}`, "$.safeMode"},
		{`{"mode":"ask","safeMode":"no"}`, "$.safeMode"},
		{string(policyJSON("ask", scopeJSON("sha256:abc", "local", "/w", 5000, 100, ""))), "$.trusted[0].revision"},
		{string(policyJSON("ask", scopeJSON(rev1, "", "/w", 5000, 100, ""))), "$.trusted[0].agentId"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "w", 5000, 100, ""))), "$.trusted[0].workspace"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w/../x", 5000, 100, ""))), "$.trusted[0].workspace"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 999, 100, ""))), "$.trusted[0].timeoutMsCeiling"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 120001, 100, ""))), "$.trusted[0].timeoutMsCeiling"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 5000, 0, ""))), "$.trusted[0].maxOutputBytesCeiling"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 5000, 262145, ""))), "$.trusted[0].maxOutputBytesCeiling"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 5000, 100, `,"network":true`))), "$.trusted[0].network"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 5000, 100, `,"approvedAt":"yesterday"`))), "$.trusted[0].approvedAt"},
		{`{"mode":"ask","safeMode":false,"trusted":[{"revision":"` + rev1 + `","agentId":"local","workspace":"/w","timeoutMsCeiling":99999999999999999999999,"maxOutputBytesCeiling":100}]}`, "$.trusted[0].timeoutMsCeiling"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 5000, 100, ""), scopeJSON(rev1, "local", "/w", 5000, 100, ""))), "$.trusted[1]"},
		{string(policyJSON("ask", append(many, scopeJSON(rev2, "x", "/w", 5000, 100, ""))...)), "$.trusted"},
		{`{"mode":"ask","safeMode":false} {}`, "$"},
		{`{"mode":"ask","safeMode":false} ]`, "$"},
		{`{"mode":"ask","safeMode":false}}`, "$"},
		{`{"mode":"ask","safeMode":1,"x":1} ]`, "$"},
	}
	for _, c := range cases {
		_, err := f.st.Set(context.Background(), []byte(c.doc))
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Fields[0].Path != c.path {
			t.Errorf("%.80s: err %v, want path %s", c.doc, err, c.path)
		}
	}
	now, _ := f.st.Get(context.Background())
	a, _ := json.Marshal(now)
	b, _ := json.Marshal(good)
	if string(a) != string(b) {
		t.Fatalf("state changed by rejected submissions:\n%s\n%s", a, b)
	}
}

func TestMatch(t *testing.T) {
	f := newFixture(t)
	p := f.set(t, policyJSON("trusted_revisions", scopeJSON(rev1, "local", "/w", 5000, 100, "")))
	for _, c := range []struct {
		rev, agent, ws string
		timeout, out   int
		ok             bool
	}{
		{rev1, "local", "/w", 5000, 100, true},
		{rev1, "local", "/w", 1000, 1, true},
		{rev1, "local", "/w", 5001, 100, false},
		{rev1, "local", "/w", 5000, 101, false},
		{rev2, "local", "/w", 5000, 100, false},
		{rev1, "other", "/w", 5000, 100, false},
		{rev1, "local", "/w2", 5000, 100, false},
	} {
		if _, ok := p.Match(c.rev, c.agent, c.ws, c.timeout, c.out); ok != c.ok {
			t.Errorf("%+v: match %v", c, ok)
		}
	}
	p.Mode = ModeAsk
	if _, ok := p.Match(rev1, "local", "/w", 5000, 100); ok {
		t.Error("scope matched outside trusted mode")
	}
	draft := f.set(t, policyJSON("ask", scopeJSON(rev2, "local", "/w", 5000, 100, "")))
	draft.Mode = ModeTrusted
	if _, ok := draft.Match(rev2, "local", "/w", 5000, 100); ok {
		t.Error("a draft scope matched")
	}
}

func FuzzParseExecution(f *testing.F) {
	f.Add(policyJSON("trusted_revisions", scopeJSON(rev1, "local", "/w", 5000, 100, `,"receiptId":"x"`)))
	f.Add([]byte(`{"mode":"ask","safeMode":true,"trusted":null}`))
	f.Add([]byte(`{"MODE":1,"safeMode":"no","x":{},"trusted":[{"revision":null,"timeoutMsCeiling":1e3},[],{"Workspace":"/w","maxOutputBytesCeiling":-99999999999999999999}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseExecution(data)
		var ve *ValidationError
		if err != nil && (!errors.As(err, &ve) || len(ve.Fields) == 0) {
			t.Fatalf("rejected without a field error: %v", err)
		}
		// The one-decode path for clean scopes accepts only what the
		// member-by-member path accepts, with the same value.
		var doc struct{ Trusted []json.RawMessage }
		if json.Unmarshal(data, &doc) == nil {
			for _, r := range doc.Trusted {
				if fast, ok := cleanScope(r); ok {
					v := &validator{}
					slow, sok := v.scopeMembers(r, "$")
					if !sok || len(v.errs) > 0 || fast.key() != slow.key() || (fast.ReceiptID == nil) != (slow.ReceiptID == nil) || (fast.ApprovedAt == nil) != (slow.ApprovedAt == nil) {
						t.Fatalf("scope %s: clean %+v, member by member %+v %v", r, fast, slow, v.errs)
					}
				}
			}
		}
		if err != nil {
			return
		}
		// What was accepted reads back the same.
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if q, err := ParseExecution(again); err != nil || len(q.Trusted) != len(p.Trusted) || q.Mode != p.Mode || q.SafeMode != p.SafeMode {
			t.Fatalf("accepted %s, its encoding %s reads as %+v, %v", data, again, q, err)
		}
		for _, s := range p.Trusted {
			if s.ReceiptID != nil || s.ApprovedAt != nil {
				t.Fatal("a submitted receipt survived parsing")
			}
		}
		if len(p.Trusted) > MaxScopes {
			t.Fatal("too many scopes accepted")
		}
	})
}

// FuzzDecodeStoredPolicy: whatever the settings row holds, reading it
// never panics, and an accepted value has only receipts this key issued.
func FuzzDecodeStoredPolicy(f *testing.F) {
	key := []byte("0123456789abcdef0123456789abcdef")
	st := &Store{key: key}
	f.Add(policyJSON("trusted_revisions", scopeJSON(rev1, "local", "/w", 5000, 100, `,"receiptId":"6f1c2e4a-1111-4222-8333-444455556666","approvedAt":"2026-11-30T12:00:00Z"`)))
	f.Add([]byte(`{"mode":"ask","safeMode":true,"trusted":[]}`))
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	sc := Scope{Revision: rev1, AgentID: "local", Workspace: "/w", TimeoutMsCeiling: 5000, MaxOutputBytesCeiling: 100}
	f.Add(policyJSON("trusted_revisions", scopeJSON(rev1, "local", "/w", 5000, 100, fmt.Sprintf(`,"receiptId":%q,"approvedAt":%q`, issueReceipt(key, sc, at), at.Format(time.RFC3339)))))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := st.decodeStored(data)
		if err != nil {
			return
		}
		for _, s := range p.Trusted {
			if s.ReceiptID != nil && !verifyReceipt(key, s) {
				t.Fatalf("accepted an unverified receipt: %+v", s)
			}
		}
	})
}

// One submission with a problem in every member gets every problem back in
// one answer, each at its own path: a wrong type or an unknown member hides
// none of the others (it used to stop the whole object, or the whole scope,
// at its first decode error).
func TestEveryProblemReportedAtOnce(t *testing.T) {
	doc := `{"mode":1,"safeMode":"no","extra":true,"trusted":[
		{"revision":"x","agentId":"","workspace":"rel","timeoutMsCeiling":"abc","maxOutputBytesCeiling":1.5,"network":true},
		{"revision":"` + rev1 + `","agentId":"local","workspace":"/w","timeoutMsCeiling":999,"maxOutputBytesCeiling":262145,"receiptId":7}]}`
	_, err := ParseExecution([]byte(doc))
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err %v, want a ValidationError", err)
	}
	got := map[string]FieldError{}
	for _, f := range ve.Fields {
		got[f.Path] = f
	}
	want := map[string]string{
		"$.mode":                             "invalid_type",
		"$.safeMode":                         "invalid_type",
		"$.extra":                            "unknown_field",
		"$.trusted[0].revision":              "invalid_revision",
		"$.trusted[0].agentId":               "invalid_agent",
		"$.trusted[0].workspace":             "invalid_workspace",
		"$.trusted[0].timeoutMsCeiling":      "invalid_type",
		"$.trusted[0].maxOutputBytesCeiling": "invalid_type",
		"$.trusted[0].network":               "unknown_field",
		"$.trusted[1].timeoutMsCeiling":      "out_of_range",
		"$.trusted[1].maxOutputBytesCeiling": "out_of_range",
		"$.trusted[1].receiptId":             "invalid_type",
	}
	for path, code := range want {
		if got[path].Code != code {
			t.Errorf("%s: got %+v, want code %s", path, got[path], code)
		}
	}
	if len(ve.Fields) != len(want) {
		t.Errorf("got %d problems, want %d: %+v", len(ve.Fields), len(want), ve.Fields)
	}
	// A range problem carries its bounds, and its message says which one was crossed.
	lo, hi := got["$.trusted[1].timeoutMsCeiling"], got["$.trusted[1].maxOutputBytesCeiling"]
	if lo.Min == nil || *lo.Min != 1000 || lo.Max == nil || *lo.Max != 120000 || lo.Message != "must be at least 1000" {
		t.Errorf("timeout bounds: %+v", lo)
	}
	if hi.Min == nil || *hi.Min != 1 || hi.Max == nil || *hi.Max != 262144 || hi.Message != "must be at most 262144" {
		t.Errorf("output bounds: %+v", hi)
	}
}

// BenchmarkParseExecution reads a policy of MaxScopes scopes (every run
// reads the stored policy once).
func BenchmarkParseExecution(b *testing.B) {
	var scopes []string
	for i := 0; i < MaxScopes; i++ {
		scopes = append(scopes, scopeJSON(rev1, fmt.Sprintf("agent-%d", i), "/home/someone/work", 5000, 100, ""))
	}
	doc := policyJSON("trusted_revisions", scopes...)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if _, err := ParseExecution(doc); err != nil {
			b.Fatal(err)
		}
	}
}

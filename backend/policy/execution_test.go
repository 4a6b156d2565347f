package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	ids   int
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{path: filepath.Join(t.TempDir(), store.FileName), clock: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
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
	f.st = NewStore(db, func() time.Time { return f.clock }, func() string { f.ids++; return fmt.Sprintf("receipt-%d", f.ids) })
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
	if *p.Trusted[0].ReceiptID != "receipt-1" || !p.Trusted[0].ApprovedAt.Equal(f.clock) {
		t.Fatalf("forged receipt kept: %+v", p.Trusted[0])
	}

	// Draft in ask mode: no receipt for a new scope; the approved one keeps its own.
	f.clock = f.clock.Add(time.Hour)
	p = f.set(t, policyJSON("ask", a, b))
	if *p.Trusted[0].ReceiptID != "receipt-1" || p.Trusted[1].ReceiptID != nil || p.Trusted[1].ApprovedAt != nil {
		t.Fatalf("ask-mode save: %+v", p.Trusted)
	}

	// Unchanged scope keeps its receipt across a save and a restart.
	f.reopen(t)
	p = f.set(t, policyJSON("trusted_revisions", a, b))
	if *p.Trusted[0].ReceiptID != "receipt-1" || *p.Trusted[1].ReceiptID != "receipt-2" {
		t.Fatalf("after restart: %+v", p.Trusted)
	}
	got, _ := f.st.Get(context.Background())
	if *got.Trusted[0].ReceiptID != "receipt-1" || !got.Trusted[1].ApprovedAt.Equal(f.clock) {
		t.Fatalf("stored: %+v", got.Trusted)
	}

	// Changed ceiling: new receipt.
	changed := scopeJSON(rev1, "local", "/work", 6000, 65536, "")
	p = f.set(t, policyJSON("trusted_revisions", changed, b))
	if *p.Trusted[0].ReceiptID != "receipt-3" || *p.Trusted[1].ReceiptID != "receipt-2" {
		t.Fatalf("changed ceiling: %+v", p.Trusted)
	}

	// Removed, then re-added: a new receipt, never the old one.
	f.set(t, policyJSON("trusted_revisions", b))
	p = f.set(t, policyJSON("trusted_revisions", changed, b))
	if *p.Trusted[0].ReceiptID != "receipt-4" {
		t.Fatalf("re-added: %+v", p.Trusted)
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
		{`{"mode":"ask","safeMode":false,"trusted":[],"extra":1}`, "$"},
		{`{"mode":"sometimes","safeMode":false}`, "$.mode"},
		{`{"safeMode":false}`, "$.mode"},
		{`{"mode":"ask"}`, "$.safeMode"},
		{`{"mode":"ask","safeMode":"no"}`, "$"},
		{string(policyJSON("ask", scopeJSON("sha256:abc", "local", "/w", 5000, 100, ""))), "$.trusted[0].revision"},
		{string(policyJSON("ask", scopeJSON(rev1, "", "/w", 5000, 100, ""))), "$.trusted[0].agentId"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "w", 5000, 100, ""))), "$.trusted[0].workspace"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w/../x", 5000, 100, ""))), "$.trusted[0].workspace"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 999, 100, ""))), "$.trusted[0].timeoutMsCeiling"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 120001, 100, ""))), "$.trusted[0].timeoutMsCeiling"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 5000, 0, ""))), "$.trusted[0].maxOutputBytesCeiling"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 5000, 262145, ""))), "$.trusted[0].maxOutputBytesCeiling"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 5000, 100, `,"network":true`))), "$.trusted[0]"},
		{string(policyJSON("ask", scopeJSON(rev1, "local", "/w", 5000, 100, ""), scopeJSON(rev1, "local", "/w", 5000, 100, ""))), "$.trusted[1]"},
		{string(policyJSON("ask", append(many, scopeJSON(rev2, "x", "/w", 5000, 100, ""))...)), "$.trusted"},
		{`{"mode":"ask","safeMode":false} {}`, "$"},
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
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseExecution(data)
		if err != nil {
			return
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

package agents

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/store"
)

// newRegistry is a Registry on a fresh database, with the real clock.
func newRegistry(t *testing.T) *Registry {
	t.Helper()
	db, _ := openDB(t)
	return New(db, nil)
}

func openDB(t *testing.T) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), store.FileName)
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// clock returns a now func that starts at t0 and advances a second per call.
func clock(t0 time.Time) func() time.Time {
	var mu sync.Mutex
	next := t0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t := next
		next = next.Add(time.Second)
		return t
	}
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 123456789, time.UTC)

func TestAddAndAuthenticate(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	r := New(db, clock(t0))
	a, token, err := r.Add(ctx, "  Claude Code  ", true)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "Claude Code" || !a.CanExecuteSkills || a.Disabled || a.BuiltIn || a.ID == "" || a.ID == LocalID || !a.CreatedAt.Equal(t0) {
		t.Fatalf("Add returned %+v", a)
	}
	if !strings.HasPrefix(token, "gha_") || len(token) != 4+43 || strings.ContainsAny(token, "=+/") {
		t.Fatalf("token %q is not gha_ + 43 base64url characters", token)
	}
	got, err := r.Authenticate(ctx, token)
	if err != nil || got != a {
		t.Fatalf("Authenticate = %+v, %v; want %+v", got, err, a)
	}
	if g, err := r.Get(ctx, a.ID); err != nil || g != a {
		t.Fatalf("Get = %+v, %v", g, err)
	}
	for _, q := range []string{a.ID, "Claude Code", "claude code", " CLAUDE CODE "} {
		if g, err := r.Find(ctx, q); err != nil || g != a {
			t.Errorf("Find(%q) = %+v, %v", q, g, err)
		}
	}
	if _, err := r.Find(ctx, "nobody"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Find(nobody) = %v", err)
	}
	if _, err := r.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(nope) = %v", err)
	}

	b, token2, err := r.Add(ctx, "reader", false)
	if err != nil {
		t.Fatal(err)
	}
	if token2 == token {
		t.Fatal("two agents got the same token")
	}
	if got, err := r.Authenticate(ctx, token2); err != nil || got.ID != b.ID || got.CanExecuteSkills {
		t.Fatalf("Authenticate(second) = %+v, %v", got, err)
	}
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0] != Local() || list[1] != a || list[2] != b {
		t.Fatalf("List = %+v", list)
	}

	// The JSON form carries no secret.
	js, _ := json.Marshal(list)
	if bytes.Contains(js, []byte(token)) || bytes.Contains(js, []byte("hash")) {
		t.Fatalf("JSON leaks a token: %s", js)
	}
	if !bytes.Contains(js, []byte(`"built_in":true`)) || !bytes.Contains(js, []byte(`"can_execute_skills":true`)) {
		t.Fatalf("JSON = %s", js)
	}
}

func TestTokenIsStoredOnlyAsHash(t *testing.T) {
	ctx := context.Background()
	db, path := openDB(t)
	r := New(db, nil)
	a, token, err := r.Add(ctx, "ci-bot", true)
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimPrefix(token, "gha_")
	sum := sha256.Sum256([]byte(token))

	// Every column of every row, read directly.
	rows, err := db.SQL().Query(`SELECT id, name, token_hash, can_execute_skills, disabled, created_at FROM agents`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
		var id, name, hash, created string
		var canExec, disabled int
		if err := rows.Scan(&id, &name, &hash, &canExec, &disabled, &created); err != nil {
			t.Fatal(err)
		}
		for _, col := range []string{id, name, hash, created} {
			if strings.Contains(col, secret) {
				t.Fatalf("column value %q contains the token", col)
			}
		}
		if id != a.ID || hash != hex.EncodeToString(sum[:]) {
			t.Fatalf("row id=%s hash=%s; want %s and SHA-256 hex of the token", id, hash, a.ID)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d rows", n)
	}

	// Nor is it anywhere in the database files (main file, WAL, journal).
	files, _ := filepath.Glob(path + "*")
	if len(files) == 0 {
		t.Fatal("no database files found")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Fatalf("%s contains the raw token", f)
		}
	}

	// No call gives the token back.
	got, _ := r.Get(ctx, a.ID)
	list, _ := r.List(ctx)
	for _, v := range []any{got, list} {
		js, _ := json.Marshal(v)
		if bytes.Contains(js, []byte(secret)) || bytes.Contains(js, []byte(hex.EncodeToString(sum[:]))) {
			t.Fatalf("%s exposes the token or its hash", js)
		}
	}
}

func TestAuthenticateRefusals(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t)
	a, token, err := r.Add(ctx, "agent", true)
	if err != nil {
		t.Fatal(err)
	}
	_, other, err := r.Add(ctx, "other", true)
	if err != nil {
		t.Fatal(err)
	}
	flipped := []byte(token)
	if flipped[len(flipped)-1] == 'A' {
		flipped[len(flipped)-1] = 'B'
	} else {
		flipped[len(flipped)-1] = 'A'
	}
	sum := sha256.Sum256([]byte(token))
	for _, bad := range []string{
		"", "local", "LOCAL", LocalID, "gha_", "gha_local",
		string(flipped), token[:len(token)-1], token + "A", " " + token, token + "\n",
		strings.ToUpper(token), strings.TrimPrefix(token, "gha_"), "ghb_" + strings.TrimPrefix(token, "gha_"),
		hex.EncodeToString(sum[:]), // the stored hash is not a token
		a.ID, a.Name,
	} {
		got, err := r.Authenticate(ctx, bad)
		if !errors.Is(err, ErrUnauthenticated) || errors.Is(err, ErrDisabled) || got != (Agent{}) {
			t.Errorf("Authenticate(%q) = %+v, %v; want ErrUnauthenticated", bad, got, err)
		}
	}

	// Disabled: refused with ErrDisabled (which is also ErrUnauthenticated);
	// the other agent is unaffected; re-enabling restores access.
	if err := r.SetDisabled(ctx, a.ID, true); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Authenticate(ctx, token); !errors.Is(err, ErrDisabled) || !errors.Is(err, ErrUnauthenticated) || got != (Agent{}) {
		t.Fatalf("disabled agent: %+v, %v", got, err)
	}
	if g, _ := r.Get(ctx, a.ID); !g.Disabled {
		t.Fatalf("Get after disable: %+v", g)
	}
	if _, err := r.Authenticate(ctx, other); err != nil {
		t.Fatalf("other agent refused: %v", err)
	}
	if err := r.SetDisabled(ctx, a.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Authenticate(ctx, token); err != nil {
		t.Fatalf("re-enabled agent: %v", err)
	}

	// Capability changes are visible through Authenticate.
	if err := r.SetCanExecute(ctx, a.ID, false); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Authenticate(ctx, token); err != nil || got.CanExecuteSkills {
		t.Fatalf("after SetCanExecute(false): %+v, %v", got, err)
	}

	// Removed: refused, and gone from Get and List.
	if err := r.Remove(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Authenticate(ctx, token); !errors.Is(err, ErrUnauthenticated) || errors.Is(err, ErrDisabled) {
		t.Fatalf("removed agent: %v", err)
	}
	if _, err := r.Get(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get removed: %v", err)
	}
	if list, _ := r.List(ctx); len(list) != 2 {
		t.Fatalf("List after remove: %+v", list)
	}
	for name, err := range map[string]error{
		"Remove":        r.Remove(ctx, a.ID),
		"SetDisabled":   r.SetDisabled(ctx, a.ID, true),
		"SetCanExecute": r.SetCanExecute(ctx, a.ID, true),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s(removed) = %v, want ErrNotFound", name, err)
		}
	}
	// The name is free again, with a new id and token.
	a2, token3, err := r.Add(ctx, "AGENT", true)
	if err != nil {
		t.Fatal(err)
	}
	if a2.ID == a.ID || token3 == token {
		t.Fatal("re-added agent reused id or token")
	}
	if _, err := r.Authenticate(ctx, token); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("old token after re-add: %v", err)
	}
}

// A row claiming the local id (written by something other than Add) is
// never authenticated and never shadows the built-in identity.
func TestStoredLocalRowIgnored(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	r := New(db, nil)
	const token = "gha_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	sum := sha256.Sum256([]byte(token))
	if _, err := db.SQL().Exec(`INSERT INTO agents (id, name, token_hash, can_execute_skills, disabled, created_at) VALUES ('local', 'impostor', ?, 1, 0, ?)`,
		hex.EncodeToString(sum[:]), t0.Format(time.RFC3339Nano)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Authenticate(ctx, token); !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("Authenticate(local row) = %v", err)
	}
	if g, err := r.Get(ctx, LocalID); err != nil || g != Local() {
		t.Fatalf("Get(local) = %+v, %v", g, err)
	}
	if list, err := r.List(ctx); err != nil || len(list) != 1 || list[0] != Local() {
		t.Fatalf("List = %+v, %v", list, err)
	}
}

func TestNameRules(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t)
	ok := []string{
		strings.Repeat("a", 64),
		"a",
		"Agent 007.v2_beta-1",
		"   padded   ",
	}
	for _, name := range ok {
		if _, _, err := r.Add(ctx, name, false); err != nil {
			t.Errorf("Add(%q): %v", name, err)
		}
	}
	invalid := []string{
		strings.Repeat("b", 65),
		"",
		"   ",
		"\t",
		"semi;colon",
		"slash/",
		"new\nline",
		"tab\tinside",
		"émile",
		"quote\"",
		"nul\x00",
		"emoji 🙂",
	}
	for _, name := range invalid {
		if _, _, err := r.Add(ctx, name, false); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Add(%q) = %v, want ErrInvalidName", name, err)
		}
	}
	taken := []string{
		strings.Repeat("A", 64), // case-insensitive duplicate of the 64-char name
		"AGENT 007.V2_BETA-1",
		"padded",
		" PADDED",
		"local", "Local", " LOCAL ",
	}
	for _, name := range taken {
		if _, _, err := r.Add(ctx, name, false); !errors.Is(err, ErrNameTaken) {
			t.Errorf("Add(%q) = %v, want ErrNameTaken", name, err)
		}
	}
	if _, _, err := r.Add(ctx, "local", true); !errors.Is(err, ErrBuiltIn) {
		t.Errorf("Add(local) = %v, want ErrBuiltIn too", err)
	}
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1+len(ok) {
		t.Fatalf("List has %d agents after refusals, want %d: %+v", len(list), 1+len(ok), list)
	}
}

func TestLocalIsBuiltIn(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	r := New(db, nil)
	l := Local()
	if l.ID != LocalID || l.Name != "local" || !l.CanExecuteSkills || !l.BuiltIn || l.Disabled || !l.CreatedAt.IsZero() {
		t.Fatalf("Local() = %+v", l)
	}
	for _, q := range []string{"local", "LOCAL", " Local "} {
		if g, err := r.Find(ctx, q); err != nil || g != l {
			t.Errorf("Find(%q) = %+v, %v", q, g, err)
		}
	}
	if g, err := r.Get(ctx, LocalID); err != nil || g != l {
		t.Fatalf("Get(local) = %+v, %v", g, err)
	}
	for name, err := range map[string]error{
		"SetDisabled(true)":    r.SetDisabled(ctx, LocalID, true),
		"SetDisabled(false)":   r.SetDisabled(ctx, LocalID, false),
		"SetCanExecute(false)": r.SetCanExecute(ctx, LocalID, false),
		"Remove":               r.Remove(ctx, LocalID),
	} {
		if !errors.Is(err, ErrBuiltIn) {
			t.Errorf("%s on local = %v, want ErrBuiltIn", name, err)
		}
	}
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM agents`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("agents rows = %d, %v; the local identity must never be stored", n, err)
	}
	if list, err := r.List(ctx); err != nil || len(list) != 1 || list[0] != l {
		t.Fatalf("List = %+v, %v", list, err)
	}
	// Mutating the returned value does not change the built-in identity.
	l.CanExecuteSkills = false
	if !Local().CanExecuteSkills {
		t.Fatal("Local() shares state")
	}
	js, _ := json.Marshal(Local())
	if string(js) != `{"id":"local","name":"local","can_execute_skills":true,"disabled":false,"built_in":true}` {
		t.Fatalf("Local JSON = %s", js)
	}
}

func TestReopenAndAuthenticate(t *testing.T) {
	ctx := context.Background()
	db, path := openDB(t)
	r := New(db, clock(t0))
	a, token, err := r.Add(ctx, "persistent", true)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := r.Add(ctx, "second", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.SetDisabled(ctx, b.ID, true); err != nil {
		t.Fatal(err)
	}
	b.Disabled = true
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db2, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	r2 := New(db2, nil)
	got, err := r2.Authenticate(ctx, token)
	if err != nil || got != a {
		t.Fatalf("after reopen: %+v, %v; want %+v", got, err, a)
	}
	if !got.CreatedAt.Equal(t0) || got.CreatedAt.Nanosecond() != t0.Nanosecond() {
		t.Fatalf("created_at %v, want %v", got.CreatedAt, t0)
	}
	list, err := r2.List(ctx)
	if err != nil || len(list) != 3 || list[1] != a || list[2] != b {
		t.Fatalf("List after reopen = %+v, %v", list, err)
	}
}

func TestListOrder(t *testing.T) {
	ctx := context.Background()
	db, _ := openDB(t)
	// Times whose RFC 3339 text would sort wrongly without a fixed-width
	// fraction: 12:00:00Z must come before 12:00:00.5Z.
	times := []time.Time{
		t0.Truncate(time.Second).Add(500 * time.Millisecond),
		t0.Truncate(time.Second),
		t0.Truncate(time.Second), // same instant: ordered by name
	}
	names := []string{"c", "b", "a"}
	for i, name := range names {
		at := times[i]
		r := New(db, func() time.Time { return at })
		if _, _, err := r.Add(ctx, name, false); err != nil {
			t.Fatal(err)
		}
	}
	list, err := New(db, nil).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range list {
		got = append(got, a.Name)
	}
	if strings.Join(got, ",") != "local,a,b,c" {
		t.Fatalf("List order = %v", got)
	}
}

func TestConcurrentAdds(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t)
	const n = 50
	var wg sync.WaitGroup
	agents := make([]Agent, n)
	tokens := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			agents[i], tokens[i], errs[i] = r.Add(ctx, fmt.Sprintf("agent-%02d", i), i%2 == 0)
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	toks := map[string]bool{}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Add %d: %v", i, errs[i])
		}
		if ids[agents[i].ID] || toks[tokens[i]] {
			t.Fatalf("duplicate id or token at %d", i)
		}
		ids[agents[i].ID], toks[tokens[i]] = true, true
	}
	list, err := r.List(ctx)
	if err != nil || len(list) != n+1 {
		t.Fatalf("List: %d agents, %v", len(list), err)
	}
	// Authenticate them all concurrently, too.
	for i := range n {
		wg.Go(func() {
			got, err := r.Authenticate(ctx, tokens[i])
			if err != nil || got.ID != agents[i].ID {
				t.Errorf("Authenticate %d: %+v, %v", i, got, err)
			}
		})
	}
	wg.Wait()
}

// Concurrent Adds of one name differing only in case: exactly one wins.
func TestConcurrentSameNameOneWins(t *testing.T) {
	ctx := context.Background()
	r := newRegistry(t)
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			name := "Shared"
			if i%2 == 1 {
				name = "sHARED"
			}
			_, _, errs[i] = r.Add(ctx, name, false)
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrNameTaken):
			t.Errorf("Add %d: %v", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d Adds succeeded, want 1", won)
	}
}

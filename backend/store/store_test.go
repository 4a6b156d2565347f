package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestOpenIsWALWithForeignKeysAndPrivateFile(t *testing.T) {
	db, path := openTemp(t)
	var mode string
	if err := db.SQL().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v", mode, err)
	}
	var fk int
	if err := db.SQL().QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign_keys = %d, %v", fk, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("database mode %v, want 0600", st.Mode().Perm())
	}
	v, err := db.SchemaVersion(context.Background())
	if err != nil || v != len(schema()) {
		t.Fatalf("schema version %d, %v", v, err)
	}
	if sv, err := db.SQLiteVersion(context.Background()); err != nil || sv == "" {
		t.Fatalf("sqlite version %q, %v", sv, err)
	}
}

func TestForeignKeysEnforced(t *testing.T) {
	db, _ := openTemp(t)
	if _, err := db.SQL().Exec(`CREATE TABLE parent (id INTEGER PRIMARY KEY); CREATE TABLE child (p INTEGER REFERENCES parent(id))`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec(`INSERT INTO child (p) VALUES (42)`); err == nil {
		t.Fatal("insert violating a foreign key succeeded")
	}
}

func TestSettingsRoundTripAndReopen(t *testing.T) {
	ctx := context.Background()
	db, path := openTemp(t)
	if _, err := db.Get(ctx, "app-settings", "missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get missing: %v", err)
	}
	if err := db.Put(ctx, "app-settings", "skill_roots", json.RawMessage(`["/a","/b"]`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, "other", "skill_roots", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	v, err := db2.Get(ctx, "app-settings", "skill_roots")
	if err != nil || string(v) != `["/a","/b"]` {
		t.Fatalf("after reopen: %s, %v", v, err)
	}
	list, err := db2.List(ctx, "other")
	if err != nil || len(list) != 1 || string(list[0].Value) != "1" || list[0].UpdatedAt.IsZero() {
		t.Fatalf("List: %+v, %v", list, err)
	}
	if err := db2.Delete(ctx, "app-settings", "skill_roots"); err != nil {
		t.Fatal(err)
	}
	if _, err := db2.Get(ctx, "app-settings", "skill_roots"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if v, _ := db2.SchemaVersion(ctx); v != len(schema()) {
		t.Fatalf("reopen re-applied or lost migrations: version %d", v)
	}
}

func TestPutRejectsBadInputWithoutChange(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	if err := db.Put(ctx, "ns", "k", json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, "ns", "k", json.RawMessage(`{"ok":`)); err == nil {
		t.Fatal("invalid JSON accepted")
	}
	if err := db.Update(ctx, "ns", "k", func(json.RawMessage, bool) (json.RawMessage, error) {
		return nil, errors.New("refused")
	}); err == nil || err.Error() != "refused" {
		t.Fatalf("Update error = %v", err)
	}
	if v, _ := db.Get(ctx, "ns", "k"); string(v) != `{"ok":true}` {
		t.Fatalf("value changed to %s", v)
	}
	for _, c := range []struct{ ns, key string }{
		{"", "k"}, {strings.Repeat("n", 129), "k"}, {"ns", ""}, {"ns", strings.Repeat("k", 257)},
	} {
		if err := db.Put(ctx, c.ns, c.key, json.RawMessage(`1`)); err == nil {
			t.Errorf("Put(%d-byte ns, %d-byte key) accepted", len(c.ns), len(c.key))
		}
	}
	// Exactly at the limits is fine.
	if err := db.Put(ctx, strings.Repeat("n", 128), strings.Repeat("k", 256), json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
}

// Two handles on one file (as two processes would have) increment one
// counter concurrently; no increment may be lost and no writer may fail.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	ctx := context.Background()
	db1, path := openTemp(t)
	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	const workers, each = 16, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		db := db1
		if w%2 == 1 {
			db = db2
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				err := db.Update(ctx, "counter", "n", func(old json.RawMessage, ok bool) (json.RawMessage, error) {
					n := 0
					if ok {
						if err := json.Unmarshal(old, &n); err != nil {
							return nil, err
						}
					}
					return json.RawMessage(fmt.Sprint(n + 1)), nil
				})
				if err != nil {
					errs <- err
				}
				if err := db.Put(ctx, "per-worker", fmt.Sprintf("w%d-%d", w, i), json.RawMessage(`true`)); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	v, err := db1.Get(ctx, "counter", "n")
	if err != nil || string(v) != fmt.Sprint(workers*each) {
		t.Fatalf("counter = %s, %v; want %d", v, err, workers*each)
	}
	list, _ := db2.List(ctx, "per-worker")
	if len(list) != workers*each {
		t.Fatalf("%d per-worker rows, want %d", len(list), workers*each)
	}
}

func TestFailedMigrationLeavesOldSchemaIntact(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	base := schema()
	db, err := open(path, base)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, "ns", "k", json.RawMessage(`"kept"`)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	broken := append(append([]Migration{}, base...), Migration{
		Version: len(base) + 1, Name: "half-broken",
		SQL: `CREATE TABLE new_table (id INTEGER); ALTER TABLE settings ADD COLUMN extra TEXT; INSERT INTO no_such_table VALUES (1);`,
	})
	if _, err := open(path, broken); err == nil || !strings.Contains(err.Error(), "half-broken") {
		t.Fatalf("broken migration: err = %v", err)
	}

	db, err = open(path, base)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, _ := db.SchemaVersion(ctx); v != len(base) {
		t.Fatalf("schema version %d after failed migration, want %d", v, len(base))
	}
	var n int
	db.SQL().QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name = 'new_table'`).Scan(&n)
	if n != 0 {
		t.Fatal("failed migration left new_table behind")
	}
	db.SQL().QueryRow(`SELECT COUNT(*) FROM pragma_table_info('settings') WHERE name = 'extra'`).Scan(&n)
	if n != 0 {
		t.Fatal("failed migration left a column behind")
	}
	if v, err := db.Get(ctx, "ns", "k"); err != nil || string(v) != `"kept"` {
		t.Fatalf("data after failed migration: %s, %v", v, err)
	}
}

func TestRefusesNewerSchemaAndBadHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	base := schema()
	newer := append(append([]Migration{}, base...), Migration{Version: len(base) + 1, Name: "future", SQL: `CREATE TABLE future (id INTEGER)`})
	db, err := open(path, newer)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := open(path, base); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("older build opened a newer database: %v", err)
	}
	gap := []Migration{{Version: 2, Name: "gap", SQL: `SELECT 1`}}
	if _, err := open(filepath.Join(t.TempDir(), FileName), gap); err == nil {
		t.Fatal("migration list with a gap accepted")
	}
}

func TestReadOnlyDirectoryIsAClearError(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o500)
	defer os.Chmod(dir, 0o700)
	if _, err := Open(filepath.Join(dir, FileName)); err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("read-only dir: %v", err)
	}
}

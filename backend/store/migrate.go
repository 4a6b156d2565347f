package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Migration is one step of the schema history. Version numbers start at 1
// and increase by one; a database records each applied version in
// schema_migrations and never applies one twice.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// schema is the schema history of Gatehouse, oldest first. New versions are
// appended; an applied version is never edited.
func schema() []Migration {
	return []Migration{
		{Version: 1, Name: "settings", SQL: `
CREATE TABLE settings (
	namespace  TEXT NOT NULL CHECK (length(namespace) BETWEEN 1 AND 128),
	key        TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 256),
	value      TEXT NOT NULL CHECK (json_valid(value)),
	updated_at TEXT NOT NULL,
	PRIMARY KEY (namespace, key)
) STRICT;`},
		{Version: 2, Name: "run history", SQL: `
CREATE TABLE runs (
	attempt_id    TEXT PRIMARY KEY,
	run_id        TEXT NOT NULL,
	skill         TEXT NOT NULL,
	revision      TEXT NOT NULL,
	agent         TEXT NOT NULL,
	authorized_by TEXT NOT NULL,
	status        TEXT NOT NULL,
	envelope      TEXT NOT NULL CHECK (json_valid(envelope)),
	stderr        TEXT NOT NULL,
	started_at    TEXT NOT NULL,
	finished_at   TEXT NOT NULL,
	elapsed_ms    INTEGER NOT NULL
) STRICT;
CREATE INDEX runs_by_start ON runs (started_at);
CREATE INDEX runs_by_run ON runs (run_id);
CREATE TABLE run_events (
	seq        INTEGER PRIMARY KEY AUTOINCREMENT,
	run_id     TEXT NOT NULL,
	attempt_id TEXT NOT NULL,
	type       TEXT NOT NULL,
	at         TEXT NOT NULL,
	event      TEXT NOT NULL CHECK (json_valid(event))
) STRICT;
CREATE INDEX run_events_by_attempt ON run_events (attempt_id, seq);`},
		{Version: 3, Name: "agents", SQL: `
CREATE TABLE agents (
	id                 TEXT PRIMARY KEY,
	name               TEXT NOT NULL UNIQUE,
	token_hash         TEXT NOT NULL UNIQUE,
	can_execute_skills INTEGER NOT NULL CHECK (can_execute_skills IN (0, 1)),
	disabled           INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
	created_at         TEXT NOT NULL
) STRICT;`},
		{Version: 4, Name: "evidence index", SQL: `
CREATE TABLE evidence (
	evidence_id    TEXT PRIMARY KEY CHECK (length(evidence_id) = 67),
	predicate_type TEXT NOT NULL,
	operation      TEXT NOT NULL,
	path           TEXT NOT NULL,
	size           INTEGER NOT NULL,
	summary        TEXT NOT NULL CHECK (json_valid(summary)),
	created_at     TEXT NOT NULL
) STRICT;
CREATE INDEX evidence_by_time ON evidence (created_at);`},
		{Version: 5, Name: "evidence shared with agents", SQL: `
ALTER TABLE evidence ADD COLUMN shared INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1));`},
	}
}

// SchemaVersion returns the newest applied migration version, 0 for a new
// database.
func (s *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.sql.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}

func (s *DB) migrate(ctx context.Context, migrations []Migration) error {
	for i, m := range migrations {
		if m.Version != i+1 {
			return fmt.Errorf("store: migration %q has version %d, want %d", m.Name, m.Version, i+1)
		}
	}
	_, err := s.sql.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	) STRICT`)
	if err != nil {
		return fmt.Errorf("store: %s: create schema_migrations: %w", s.path, err)
	}
	current, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if current > len(migrations) {
		return fmt.Errorf("store: %s: database is at schema version %d, newer than this build knows (%d); refusing to touch it", s.path, current, len(migrations))
	}
	for _, m := range migrations[current:] {
		err := s.Tx(ctx, func(tx *sql.Tx) error {
			// Another process may have applied it while we waited for the lock.
			var done int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.Version).Scan(&done); err != nil {
				return err
			}
			if done > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.Version, m.Name, now())
			return err
		})
		if err != nil {
			return fmt.Errorf("store: %s: migration %d (%s) failed, schema left at version %d: %w", s.path, m.Version, m.Name, m.Version-1, err)
		}
	}
	return nil
}

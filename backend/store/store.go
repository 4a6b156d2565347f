// Package store is Gatehouse's SQLite database: one file opened through
// github.com/mattn/go-sqlite3 in WAL mode with foreign keys enforced, a
// versioned migration history applied one transaction per version, and a
// settings table keyed by (namespace, key) holding JSON values.
//
// A DB is safe for concurrent use by many goroutines and by several
// processes sharing the same file: every write runs in an IMMEDIATE
// transaction and waits up to BusyTimeout for the write lock.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// FileName is the database's file name inside the data directory.
const FileName = "gatehouse.db"

// BusyTimeout is how long a writer waits for another writer's lock before
// failing with an error.
const BusyTimeout = 10 * time.Second

// DB is an open Gatehouse database.
type DB struct {
	sql  *sql.DB
	path string
}

// Open opens (creating if needed) the database at path and applies every
// pending migration of Gatehouse's schema. The file is created with mode 0600. A
// migration that fails leaves the database at the last version that
// succeeded and Open returns an error naming the failed version.
func Open(path string) (*DB, error) {
	return open(path, schema())
}

func open(path string, migrations []Migration) (*DB, error) {
	if path == "" {
		return nil, errors.New("store: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: resolve %q: %w", path, err)
	}
	if err := createPrivate(abs); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("_journal_mode", "WAL")
	q.Set("_foreign_keys", "on")
	q.Set("_busy_timeout", fmt.Sprint(BusyTimeout.Milliseconds()))
	q.Set("_txlock", "immediate")
	q.Set("_synchronous", "NORMAL")
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", abs, err)
	}
	s := &DB{sql: db, path: abs}
	if err := s.check(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.migrate(context.Background(), migrations); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// createPrivate makes sure the database file exists with mode 0600 before
// SQLite opens it, so the file is never briefly readable by others.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("store: create %s: %w", path, err)
	}
	return f.Close()
}

// check confirms the connection really is in WAL mode with foreign keys on.
func (s *DB) check() error {
	var mode string
	if err := s.sql.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("store: open %s: %w", s.path, err)
	}
	if mode != "wal" {
		return fmt.Errorf("store: %s: journal mode is %q, want wal", s.path, mode)
	}
	var fk int
	if err := s.sql.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil {
		return fmt.Errorf("store: %s: %w", s.path, err)
	}
	if fk != 1 {
		return fmt.Errorf("store: %s: foreign keys are off", s.path)
	}
	return nil
}

// Path returns the absolute path of the database file.
func (s *DB) Path() string { return s.path }

// SQL returns the underlying handle for packages that own their own tables
// (created by a migration in this package's schema history).
func (s *DB) SQL() *sql.DB { return s.sql }

// Close closes the database.
func (s *DB) Close() error { return s.sql.Close() }

// SQLiteVersion reports the linked SQLite library's version.
func (s *DB) SQLiteVersion(ctx context.Context) (string, error) {
	var v string
	err := s.sql.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v)
	return v, err
}

// Tx runs fn inside one IMMEDIATE transaction: it commits when fn returns
// nil and rolls back otherwise, so fn's writes land together or not at all.
func (s *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

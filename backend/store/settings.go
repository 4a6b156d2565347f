package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrNotFound is wrapped by the errors of Get when a setting does not
// exist, and of GetEvidence and SetEvidenceShared for an unknown id.
var ErrNotFound = errors.New("store: not found")

// Setting is one stored value.
type Setting struct {
	Namespace string
	Key       string
	Value     json.RawMessage
	UpdatedAt time.Time
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func checkName(namespace, key string) error {
	if namespace == "" || len(namespace) > 128 {
		return fmt.Errorf("store: namespace %q must be 1-128 bytes", namespace)
	}
	if key == "" || len(key) > 256 {
		return fmt.Errorf("store: key %q must be 1-256 bytes", key)
	}
	return nil
}

// Get returns the JSON value stored under (namespace, key), or an error
// wrapping ErrNotFound.
func (s *DB) Get(ctx context.Context, namespace, key string) (json.RawMessage, error) {
	if err := checkName(namespace, key); err != nil {
		return nil, err
	}
	var v string
	err := s.sql.QueryRowContext(ctx, `SELECT value FROM settings WHERE namespace = ? AND key = ?`, namespace, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: %s/%s", ErrNotFound, namespace, key)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %s/%s: %w", namespace, key, err)
	}
	return json.RawMessage(v), nil
}

// Put stores value, which must be valid JSON, under (namespace, key),
// replacing any previous value.
func (s *DB) Put(ctx context.Context, namespace, key string, value json.RawMessage) error {
	return s.Update(ctx, namespace, key, func(json.RawMessage, bool) (json.RawMessage, error) { return value, nil })
}

// Update atomically replaces the value under (namespace, key) with what fn
// returns given the current value (nil and false when absent). fn runs
// inside the write transaction, so concurrent Updates of the same setting
// never lose each other's changes. If fn returns an error nothing changes.
func (s *DB) Update(ctx context.Context, namespace, key string, fn func(old json.RawMessage, ok bool) (json.RawMessage, error)) error {
	if err := checkName(namespace, key); err != nil {
		return err
	}
	return s.Tx(ctx, func(tx *sql.Tx) error {
		var cur string
		err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE namespace = ? AND key = ?`, namespace, key).Scan(&cur)
		ok := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: read %s/%s: %w", namespace, key, err)
		}
		var old json.RawMessage
		if ok {
			old = json.RawMessage(cur)
		}
		next, err := fn(old, ok)
		if err != nil {
			return err
		}
		if !json.Valid(next) {
			return fmt.Errorf("store: put %s/%s: value is not valid JSON", namespace, key)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO settings (namespace, key, value, updated_at) VALUES (?, ?, ?, ?)
			ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
			namespace, key, string(next), now())
		if err != nil {
			return fmt.Errorf("store: put %s/%s: %w", namespace, key, err)
		}
		return nil
	})
}

// Delete removes (namespace, key); deleting a missing setting is not an error.
func (s *DB) Delete(ctx context.Context, namespace, key string) error {
	if err := checkName(namespace, key); err != nil {
		return err
	}
	if _, err := s.sql.ExecContext(ctx, `DELETE FROM settings WHERE namespace = ? AND key = ?`, namespace, key); err != nil {
		return fmt.Errorf("store: delete %s/%s: %w", namespace, key, err)
	}
	return nil
}

// List returns every setting in namespace ordered by key.
func (s *DB) List(ctx context.Context, namespace string) ([]Setting, error) {
	rows, err := s.sql.QueryContext(ctx, `SELECT key, value, updated_at FROM settings WHERE namespace = ? ORDER BY key`, namespace)
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", namespace, err)
	}
	defer rows.Close()
	var out []Setting
	for rows.Next() {
		var k, v, at string
		if err := rows.Scan(&k, &v, &at); err != nil {
			return nil, fmt.Errorf("store: list %s: %w", namespace, err)
		}
		t, _ := time.Parse(time.RFC3339Nano, at)
		out = append(out, Setting{Namespace: namespace, Key: k, Value: json.RawMessage(v), UpdatedAt: t})
	}
	return out, rows.Err()
}

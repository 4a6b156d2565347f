package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestMemoryAgentNamespaceRoundTrip(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	m := db.Memory()
	const ns = "agent.notes"
	if _, err := m.Get(ctx, ns, "todo"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get missing: %v", err)
	}
	if err := m.Put(ctx, ns, "todo", json.RawMessage(`["a","b"]`)); err != nil {
		t.Fatal(err)
	}
	if err := m.Put(ctx, ns, "count", json.RawMessage(`3`)); err != nil {
		t.Fatal(err)
	}
	if v, err := m.Get(ctx, ns, "todo"); err != nil || string(v) != `["a","b"]` {
		t.Fatalf("Get: %s, %v", v, err)
	}
	list, err := m.List(ctx, ns)
	if err != nil || len(list) != 2 || list[0].Key != "count" || list[1].Key != "todo" {
		t.Fatalf("List: %+v, %v", list, err)
	}
	if err := m.Delete(ctx, ns, "todo"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(ctx, ns, "todo"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after Delete: %v", err)
	}
	if err := m.Delete(ctx, ns, "todo"); err != nil {
		t.Fatalf("Delete missing: %v", err)
	}
	// The same data is what the DB sees.
	if v, err := db.Get(ctx, ns, "count"); err != nil || string(v) != "3" {
		t.Fatalf("db.Get: %s, %v", v, err)
	}
}

func TestMemoryPutRejectsInvalidJSON(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	m := db.Memory()
	if err := m.Put(ctx, "agent", "k", json.RawMessage(`{"ok":true}`)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"ok":`, ``, `nope`, `{"a":1}{`} {
		if err := m.Put(ctx, "agent", "k", json.RawMessage(bad)); err == nil {
			t.Errorf("Put(%q) accepted", bad)
		}
	}
	if v, _ := m.Get(ctx, "agent", "k"); string(v) != `{"ok":true}` {
		t.Fatalf("value changed to %s", v)
	}
}

// rawRow reads a settings row exactly as stored.
func rawRow(t *testing.T, db *DB, ns, key string) (value, updated string) {
	t.Helper()
	err := db.SQL().QueryRow(`SELECT value, updated_at FROM settings WHERE namespace = ? AND key = ?`, ns, key).Scan(&value, &updated)
	if err != nil {
		t.Fatalf("read %s/%s: %v", ns, key, err)
	}
	return value, updated
}

func TestMemoryRefusesReservedNamespaces(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	m := db.Memory()

	// Existing values written by Gatehouse itself, byte for byte.
	const policy = `{"mode":"blocked",  "safeMode":true,"trusted":[]}`
	const internal = `{"x": 1}`
	if err := db.Put(ctx, "app-settings", "skill_execution_policy", json.RawMessage(policy)); err != nil {
		t.Fatal(err)
	}
	if err := db.Put(ctx, "gatehouse.x", "k", json.RawMessage(internal)); err != nil {
		t.Fatal(err)
	}
	policyV, policyAt := rawRow(t, db, "app-settings", "skill_execution_policy")
	internalV, internalAt := rawRow(t, db, "gatehouse.x", "k")
	if policyV != policy || internalV != internal {
		t.Fatalf("setup stored %q, %q", policyV, internalV)
	}

	for _, ns := range []string{
		"app-settings", "App-Settings", "APP-SETTINGS", " app-settings", "app-settings ", "\tapp-settings\n",
		"gatehouse.x", "gatehouse.", "Gatehouse.X", " gatehouse.x", "GATEHOUSE.policy",
	} {
		for _, key := range []string{"skill_execution_policy", "k"} {
			if _, err := m.Get(ctx, ns, key); !errors.Is(err, ErrReservedNamespace) {
				t.Errorf("Get(%q, %q) = %v, want ErrReservedNamespace", ns, key, err)
			}
			if err := m.Put(ctx, ns, key, json.RawMessage(`{"mode":"trusted_revisions"}`)); !errors.Is(err, ErrReservedNamespace) {
				t.Errorf("Put(%q, %q) = %v, want ErrReservedNamespace", ns, key, err)
			}
			// Invalid JSON on a reserved namespace is refused for the namespace.
			if err := m.Put(ctx, ns, key, json.RawMessage(`{`)); !errors.Is(err, ErrReservedNamespace) {
				t.Errorf("Put(%q, %q, invalid) = %v, want ErrReservedNamespace", ns, key, err)
			}
			if err := m.Delete(ctx, ns, key); !errors.Is(err, ErrReservedNamespace) {
				t.Errorf("Delete(%q, %q) = %v, want ErrReservedNamespace", ns, key, err)
			}
		}
		if list, err := m.List(ctx, ns); !errors.Is(err, ErrReservedNamespace) || list != nil {
			t.Errorf("List(%q) = %v, %v, want ErrReservedNamespace", ns, list, err)
		}
		if !IsReserved(ns) {
			t.Errorf("IsReserved(%q) = false", ns)
		}
	}

	if v, at := rawRow(t, db, "app-settings", "skill_execution_policy"); v != policyV || at != policyAt {
		t.Fatalf("app-settings changed: %q at %s, was %q at %s", v, at, policyV, policyAt)
	}
	if v, at := rawRow(t, db, "gatehouse.x", "k"); v != internalV || at != internalAt {
		t.Fatalf("gatehouse.x changed: %q at %s, was %q at %s", v, at, internalV, internalAt)
	}
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM settings`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("settings rows = %d, %v; want 2", n, err)
	}
}

func TestMemoryNamespaceRules(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t)
	m := db.Memory()
	for _, ns := range []string{"app-settings.x", "my-app-settings", "gatehouse", "gatehousex", "x.gatehouse.y", "agent 1", "ägent"} {
		if IsReserved(ns) {
			t.Errorf("IsReserved(%q) = true", ns)
		}
		if err := m.Put(ctx, ns, "k", json.RawMessage(`1`)); err != nil {
			t.Errorf("Put(%q): %v", ns, err)
		}
	}
	// Not reserved, but refused outright: they would display like another
	// namespace.
	for _, ns := range []string{"", " notes", "notes ", "no\x00tes", "no\ntes", "bad\xffutf8"} {
		if err := m.Put(ctx, ns, "k", json.RawMessage(`1`)); err == nil || errors.Is(err, ErrReservedNamespace) {
			t.Errorf("Put(%q) = %v, want a namespace error", ns, err)
		}
		if _, err := m.List(ctx, ns); err == nil {
			t.Errorf("List(%q) accepted", ns)
		}
	}
}

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrReservedNamespace is returned by every Memory operation on a reserved
// namespace (see IsReserved). Such a call changes nothing.
var ErrReservedNamespace = errors.New("store: namespace is reserved for Gatehouse")

// appSettings is the namespace of the person's standing settings, among
// them the skill execution policy.
const appSettings = "app-settings"

// reservedPrefix starts every namespace Gatehouse keeps for itself.
const reservedPrefix = "gatehouse."

// IsReserved reports whether namespace belongs to Gatehouse rather than to
// agents: "app-settings" or any namespace starting with "gatehouse.",
// compared after trimming surrounding white space and lower-casing, so
// "App-Settings" and " app-settings" are reserved too.
func IsReserved(namespace string) bool {
	n := strings.ToLower(strings.TrimSpace(namespace))
	return n == appSettings || strings.HasPrefix(n, reservedPrefix)
}

// Memory is the generic memory agents and skills write through: JSON
// values in the settings table under (namespace, key), with every
// reserved namespace (IsReserved) out of reach. Agents and skills are only
// ever given a Memory, never the DB, so no agent-facing path can read or
// write policy, trust scopes, agents or operator settings.
//
// A Memory is safe for concurrent use. Get it from DB.Memory.
type Memory struct {
	db *DB
}

// Memory returns the agent-facing view of s's settings.
func (s *DB) Memory() *Memory { return &Memory{db: s} }

// checkNamespace refuses reserved namespaces with ErrReservedNamespace,
// namespaces of the wrong length, and namespaces that could be mistaken for
// another when displayed: surrounding white space, control characters or
// invalid UTF-8.
func checkNamespace(namespace string) error {
	if IsReserved(namespace) {
		return fmt.Errorf("%w: %q", ErrReservedNamespace, namespace)
	}
	if namespace == "" || len(namespace) > 128 {
		return fmt.Errorf("store: namespace %q must be 1-128 bytes", namespace)
	}
	if strings.TrimSpace(namespace) != namespace {
		return fmt.Errorf("store: namespace %q has surrounding white space", namespace)
	}
	if !utf8.ValidString(namespace) {
		return fmt.Errorf("store: namespace %q is not valid UTF-8", namespace)
	}
	if strings.ContainsFunc(namespace, unicode.IsControl) {
		return fmt.Errorf("store: namespace %q contains a control character", namespace)
	}
	return nil
}

// Get returns the JSON value stored under (namespace, key), or an error
// wrapping ErrNotFound. A reserved namespace is refused with
// ErrReservedNamespace.
func (m *Memory) Get(ctx context.Context, namespace, key string) (json.RawMessage, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	return m.db.Get(ctx, namespace, key)
}

// Put stores value, which must be valid JSON, under (namespace, key),
// replacing any previous value. A reserved namespace is refused with
// ErrReservedNamespace; on any error nothing changes.
func (m *Memory) Put(ctx context.Context, namespace, key string, value json.RawMessage) error {
	if err := checkNamespace(namespace); err != nil {
		return err
	}
	return m.db.Put(ctx, namespace, key, value)
}

// Delete removes (namespace, key); deleting a missing value is not an
// error. A reserved namespace is refused with ErrReservedNamespace and
// nothing is deleted.
func (m *Memory) Delete(ctx context.Context, namespace, key string) error {
	if err := checkNamespace(namespace); err != nil {
		return err
	}
	return m.db.Delete(ctx, namespace, key)
}

// List returns every value in namespace ordered by key. A reserved
// namespace is refused with ErrReservedNamespace.
func (m *Memory) List(ctx context.Context, namespace string) ([]Setting, error) {
	if err := checkNamespace(namespace); err != nil {
		return nil, err
	}
	return m.db.List(ctx, namespace)
}

// Package agents is Gatehouse's registry of agent identities.
//
// An agent is a registered identity that reaches Gatehouse through MCP or
// the agent API and proves who it is with a bearer token. The registry
// stores each agent's id, name, capability to execute skills, disabled
// flag, creation time and the SHA-256 of its token; the token itself is
// returned once, by Add, and is never stored or retrievable again.
//
// One identity is built in: Local, the person at the terminal or in the UI.
// It is never stored, has no token, can never be authenticated with one,
// and cannot be added, changed or removed.
//
// Only the local user's surfaces (Settings, the CLI) may call the
// registry's writers; agents never receive a Registry.
package agents

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mattn/go-sqlite3"

	"github.com/gatehouse/gatehouse/backend/store"
)

// LocalID is the id (and name) of the built-in local identity.
const LocalID = "local"

// MaxNameLength is the longest agent name Add accepts, in bytes (names are
// ASCII, so also in characters).
const MaxNameLength = 64

// TokenPrefix starts every agent token.
const TokenPrefix = "gha_"

// tokenBytes is the number of random bytes in a token.
const tokenBytes = 32

// tokenLength is the length of a well-formed token: the prefix and
// tokenBytes bytes in unpadded base64url.
var tokenLength = len(TokenPrefix) + base64.RawURLEncoding.EncodedLen(tokenBytes)

// Errors reported by the registry. They are returned wrapped with context;
// test for them with errors.Is.
var (
	// ErrNotFound means no agent has the given id or name.
	ErrNotFound = errors.New("agents: agent not found")
	// ErrInvalidName means a name breaks the naming rules of Add.
	ErrInvalidName = errors.New("agents: invalid agent name")
	// ErrNameTaken means another agent (or the built-in local identity)
	// already has the name, compared case-insensitively.
	ErrNameTaken = errors.New("agents: agent name already taken")
	// ErrBuiltIn means the operation would add, change or remove the
	// built-in local identity.
	ErrBuiltIn = errors.New("agents: the local identity is built in")
	// ErrUnauthenticated means a presented token does not identify an
	// enabled agent. Every refusal by Authenticate matches it.
	ErrUnauthenticated = errors.New("agents: not authenticated")
	// ErrDisabled means the token belongs to a disabled agent. An error
	// matching ErrDisabled also matches ErrUnauthenticated.
	ErrDisabled = errors.New("agents: agent is disabled")
)

// kindError is an error with its own message that matches several
// sentinels under errors.Is.
type kindError struct {
	msg   string
	kinds []error
}

func (e *kindError) Error() string { return e.msg }

func (e *kindError) Is(target error) bool { return slices.Contains(e.kinds, target) }

// Agent is one identity. The JSON form is what the UI and CLI show; it
// never contains a token or token hash.
type Agent struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	CanExecuteSkills bool      `json:"can_execute_skills"`
	Disabled         bool      `json:"disabled"`
	BuiltIn          bool      `json:"built_in"`
	CreatedAt        time.Time `json:"created_at,omitzero"`
}

// Local returns the built-in local identity: the person at the terminal or
// in the UI. It may execute skills (subject to policy and consent), is
// never disabled, has no creation time and has no token.
func Local() Agent {
	return Agent{ID: LocalID, Name: LocalID, CanExecuteSkills: true, BuiltIn: true}
}

// Registry reads and writes the agents table of a Gatehouse database. It is
// safe for concurrent use, including by several processes sharing the
// database file. Create one with New; the zero Registry is not usable.
type Registry struct {
	db  *store.DB
	now func() time.Time
}

// New returns a Registry over db's agents table. now supplies creation
// times; nil means time.Now.
func New(db *store.DB, now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	return &Registry{db: db, now: now}
}

// timeLayout is RFC 3339 with a fixed nine-digit fraction, so stored times
// sort chronologically as text and parse with time.RFC3339Nano.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// Add registers a new enabled agent called name and returns it with its
// token. The token is shown to the caller once: only its SHA-256 is stored
// and it cannot be retrieved again.
//
// Surrounding white space is trimmed from name; what remains must be 1 to
// MaxNameLength ASCII letters, digits, spaces, '.', '_' or '-' (an error
// wrapping ErrInvalidName otherwise) and must differ, ignoring case, from
// every registered agent's name and from the local identity's name (an
// error wrapping ErrNameTaken otherwise; for the local identity's name it
// also matches ErrBuiltIn). On error nothing is stored.
func (r *Registry) Add(ctx context.Context, name string, canExecute bool) (Agent, string, error) {
	name = strings.TrimSpace(name)
	if err := checkName(name); err != nil {
		return Agent{}, "", err
	}
	if strings.EqualFold(name, LocalID) {
		return Agent{}, "", &kindError{
			msg:   fmt.Sprintf("agents: name %q belongs to the built-in local identity", name),
			kinds: []error{ErrNameTaken, ErrBuiltIn},
		}
	}
	id, err := uuid.NewRandom()
	if err != nil {
		return Agent{}, "", fmt.Errorf("agents: add %q: generate id: %w", name, err)
	}
	token, err := newToken()
	if err != nil {
		return Agent{}, "", fmt.Errorf("agents: add %q: %w", name, err)
	}
	a := Agent{ID: id.String(), Name: name, CanExecuteSkills: canExecute, CreatedAt: r.now().UTC()}
	hash := hashToken(token)
	err = r.db.Tx(ctx, func(tx *sql.Tx) error {
		// The table's UNIQUE constraint is case-sensitive; the
		// case-insensitive rule is enforced here, inside the write
		// transaction, so two concurrent Adds cannot both pass it.
		var taken string
		err := tx.QueryRowContext(ctx, `SELECT name FROM agents WHERE name = ? COLLATE NOCASE LIMIT 1`, name).Scan(&taken)
		switch {
		case err == nil:
			return fmt.Errorf("%w: %q (registered as %q)", ErrNameTaken, name, taken)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("agents: add %q: %w", name, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO agents (id, name, token_hash, can_execute_skills, disabled, created_at) VALUES (?, ?, ?, ?, 0, ?)`,
			a.ID, a.Name, hash, boolInt(canExecute), a.CreatedAt.Format(timeLayout))
		if isUniqueName(err) {
			return fmt.Errorf("%w: %q", ErrNameTaken, name)
		}
		if err != nil {
			return fmt.Errorf("agents: add %q: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return Agent{}, "", err
	}
	return a, token, nil
}

// checkName applies the naming rules to an already trimmed name.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrInvalidName)
	}
	if len(name) > MaxNameLength {
		return fmt.Errorf("%w: %d characters, at most %d allowed", ErrInvalidName, len(name), MaxNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == ' ' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w: %q contains %q; use letters, digits, space, '.', '_' or '-'", ErrInvalidName, name, rune(c))
		}
	}
	return nil
}

// isUniqueName reports whether err is SQLite refusing a duplicate name.
func isUniqueName(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.ExtendedCode == sqlite3.ErrConstraintUnique && strings.Contains(se.Error(), "agents.name")
}

// newToken returns a fresh token: TokenPrefix and tokenBytes bytes from
// crypto/rand in unpadded base64url.
func newToken() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// hashToken returns the hex SHA-256 of token, the form stored in the table.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// wellFormed reports whether token has the shape of a token Add issues.
func wellFormed(token string) bool {
	if len(token) != tokenLength || !strings.HasPrefix(token, TokenPrefix) {
		return false
	}
	for i := len(TokenPrefix); i < len(token); i++ {
		c := token[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Authenticate returns the agent whose token is token. Any non-nil error
// means the caller is not authenticated. An unknown, malformed or empty
// token, or one that would stand for the local identity, is refused with an
// error wrapping ErrUnauthenticated; a disabled agent's token with one
// wrapping both ErrDisabled and ErrUnauthenticated. Other errors report a
// failure to read the database.
//
// Every token, well-formed or not, costs the same work before the verdict:
// one SHA-256, one lookup on the indexed hash column and one constant-time
// comparison of hashes. The token is never logged or stored.
func (r *Registry) Authenticate(ctx context.Context, token string) (Agent, error) {
	hash := hashToken(token)
	row := r.db.SQL().QueryRowContext(ctx, `SELECT id, name, token_hash, can_execute_skills, disabled, created_at FROM agents WHERE token_hash = ?`, hash)
	a, stored, err := scanAgent(row)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("agents: authenticate: %w", err)
	}
	if !found {
		// Compare against a same-length placeholder so that a miss does
		// the same comparison work as a hit.
		stored = strings.Repeat("0", len(hash))
	}
	match := subtle.ConstantTimeCompare([]byte(stored), []byte(hash)) == 1
	if !found || !match || !wellFormed(token) || a.ID == LocalID {
		return Agent{}, ErrUnauthenticated
	}
	if a.Disabled {
		// Matching ErrUnauthenticated too means callers that only
		// check ErrUnauthenticated still refuse a disabled agent.
		return Agent{}, &kindError{msg: ErrDisabled.Error(), kinds: []error{ErrDisabled, ErrUnauthenticated}}
	}
	return a, nil
}

// List returns every agent: Local first, then the registered agents
// oldest first (ties broken by name, then id).
func (r *Registry) List(ctx context.Context) ([]Agent, error) {
	rows, err := r.db.SQL().QueryContext(ctx, `SELECT id, name, token_hash, can_execute_skills, disabled, created_at FROM agents WHERE id <> ?`, LocalID)
	if err != nil {
		return nil, fmt.Errorf("agents: list: %w", err)
	}
	defer rows.Close()
	var stored []Agent
	for rows.Next() {
		a, _, err := scanAgent(rows)
		if err != nil {
			return nil, fmt.Errorf("agents: list: %w", err)
		}
		stored = append(stored, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("agents: list: %w", err)
	}
	slices.SortFunc(stored, func(a, b Agent) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return append([]Agent{Local()}, stored...), nil
}

// Get returns the agent with id: Local for LocalID, otherwise the
// registered agent, or an error wrapping ErrNotFound.
func (r *Registry) Get(ctx context.Context, id string) (Agent, error) {
	if id == LocalID {
		return Local(), nil
	}
	row := r.db.SQL().QueryRowContext(ctx, `SELECT id, name, token_hash, can_execute_skills, disabled, created_at FROM agents WHERE id = ?`, id)
	a, _, err := scanAgent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("%w: id %q", ErrNotFound, id)
	}
	if err != nil {
		return Agent{}, fmt.Errorf("agents: get %q: %w", id, err)
	}
	return a, nil
}

// Find returns the agent whose id is idOrName or, failing that, whose name
// equals idOrName (surrounding white space trimmed) ignoring case. The
// local identity is found by its id or name. A miss is an error wrapping
// ErrNotFound.
func (r *Registry) Find(ctx context.Context, idOrName string) (Agent, error) {
	a, err := r.Get(ctx, idOrName)
	if !errors.Is(err, ErrNotFound) {
		return a, err
	}
	name := strings.TrimSpace(idOrName)
	if strings.EqualFold(name, LocalID) {
		return Local(), nil
	}
	row := r.db.SQL().QueryRowContext(ctx, `SELECT id, name, token_hash, can_execute_skills, disabled, created_at FROM agents WHERE name = ? COLLATE NOCASE AND id <> ? LIMIT 1`, name, LocalID)
	a, _, err = scanAgent(row)
	if errors.Is(err, sql.ErrNoRows) {
		return Agent{}, fmt.Errorf("%w: no agent with id or name %q", ErrNotFound, idOrName)
	}
	if err != nil {
		return Agent{}, fmt.Errorf("agents: find %q: %w", idOrName, err)
	}
	return a, nil
}

// SetDisabled disables or re-enables the agent with id. A disabled agent's
// token is refused by Authenticate from the next call on. The local
// identity cannot be disabled (ErrBuiltIn); an unknown id is an error
// wrapping ErrNotFound.
func (r *Registry) SetDisabled(ctx context.Context, id string, disabled bool) error {
	op := "enable"
	if disabled {
		op = "disable"
	}
	return r.update(ctx, op, id, `UPDATE agents SET disabled = ? WHERE id = ?`, boolInt(disabled), id)
}

// SetCanExecute grants or withdraws the agent's capability to execute
// skills. The capability is necessary for execution but never implies
// consent. The local identity's capability cannot be changed (ErrBuiltIn);
// an unknown id is an error wrapping ErrNotFound.
func (r *Registry) SetCanExecute(ctx context.Context, id string, canExecute bool) error {
	return r.update(ctx, "change the skill execution capability of", id, `UPDATE agents SET can_execute_skills = ? WHERE id = ?`, boolInt(canExecute), id)
}

// Remove deletes the agent with id; its token is refused from then on and
// its name may be registered again (with a new id and token). The local
// identity cannot be removed (ErrBuiltIn); an unknown id is an error
// wrapping ErrNotFound.
func (r *Registry) Remove(ctx context.Context, id string) error {
	return r.update(ctx, "remove", id, `DELETE FROM agents WHERE id = ?`, id)
}

// update runs one single-row statement on the agent with id, refusing the
// local identity and reporting a missing row as ErrNotFound. op completes
// "cannot … it" and "agents: … %q" in error messages.
func (r *Registry) update(ctx context.Context, op, id, query string, args ...any) error {
	if id == LocalID {
		return fmt.Errorf("%w: cannot %s it", ErrBuiltIn, op)
	}
	res, err := r.db.SQL().ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("agents: %s %q: %w", op, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("agents: %s %q: %w", op, id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: id %q", ErrNotFound, id)
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanAgent reads one agents row and returns the agent and its token hash.
func scanAgent(s scanner) (Agent, string, error) {
	var a Agent
	var hash, created string
	var canExec, disabled int64
	if err := s.Scan(&a.ID, &a.Name, &hash, &canExec, &disabled, &created); err != nil {
		return Agent{}, "", err
	}
	t, err := time.Parse(time.RFC3339Nano, created)
	if err != nil {
		return Agent{}, "", fmt.Errorf("agent %q: created_at %q: %w", a.ID, created, err)
	}
	a.CanExecuteSkills = canExec == 1
	a.Disabled = disabled == 1
	a.CreatedAt = t.UTC()
	return a, hash, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

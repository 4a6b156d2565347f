// Package policy holds the person's standing decisions: the skill
// execution policy (mode, safe mode, trusted revision scopes with
// server-issued receipts) and the process-capture operator policy. Only
// the local user changes them, through the app's settings surfaces; no
// agent-facing path reaches this package's writers.
package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/gatehouse/gatehouse/backend/store"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// Where the execution policy is stored.
const (
	Namespace    = "app-settings"
	ExecutionKey = "skill_execution_policy"
)

// Mode is the execution policy mode.
type Mode string

// The modes.
const (
	ModeAsk      Mode = "ask"
	ModeBlocked  Mode = "blocked"
	ModeWorkflow Mode = "workflow"
	ModeTrusted  Mode = "trusted_revisions"
)

// Bounds of the execution policy.
const (
	MaxScopes        = 64
	minTimeoutMs     = 1000
	maxTimeoutMs     = 120000
	minOutputBytes   = 1
	maxOutputBytes   = 262144
	maxAgentIDLength = 128
)

// Scope is one trusted revision scope. ReceiptID and ApprovedAt are issued
// by the server when the scope is saved in trusted_revisions mode; nil
// marks an unapproved draft.
type Scope struct {
	Revision              string     `json:"revision"`
	AgentID               string     `json:"agentId"`
	Workspace             string     `json:"workspace"`
	TimeoutMsCeiling      int        `json:"timeoutMsCeiling"`
	MaxOutputBytesCeiling int        `json:"maxOutputBytesCeiling"`
	ReceiptID             *string    `json:"receiptId"`
	ApprovedAt            *time.Time `json:"approvedAt"`
}

// key is what makes two scopes "the same": every field except the receipt.
func (s Scope) key() string {
	return fmt.Sprintf("%s\x00%s\x00%s\x00%d\x00%d", s.Revision, s.AgentID, s.Workspace, s.TimeoutMsCeiling, s.MaxOutputBytesCeiling)
}

// Approved reports whether the scope carries a receipt.
func (s Scope) Approved() bool { return s.ReceiptID != nil && s.ApprovedAt != nil }

// Execution is the skill execution policy.
type Execution struct {
	Mode     Mode    `json:"mode"`
	SafeMode bool    `json:"safeMode"`
	Trusted  []Scope `json:"trusted"`
}

// DefaultExecution is the policy before the person changes anything.
func DefaultExecution() Execution { return Execution{Mode: ModeAsk, Trusted: []Scope{}} }

// Issue is the issue every Gatehouse parser reports: a stable Code, the
// JSON Path of the offending value and a Message for people.
type Issue = strictjson.Issue

// FieldError is one reason a submitted policy was rejected: the issue every
// Gatehouse parser reports (a code, the JSON path of the member at fault
// and a message). An out_of_range error also carries the allowed bounds,
// inclusive, so a caller can say the range without knowing it.
type FieldError struct {
	Issue
	Min *int `json:"min,omitempty"`
	Max *int `json:"max,omitempty"`
}

// ValidationError rejects a whole submission; nothing was stored.
type ValidationError struct{ Fields []FieldError }

func (e *ValidationError) Error() string {
	if len(e.Fields) == 0 {
		return "policy: invalid"
	}
	f := e.Fields[0]
	more := ""
	if len(e.Fields) > 1 {
		more = fmt.Sprintf(" (and %d more)", len(e.Fields)-1)
	}
	return fmt.Sprintf("policy: %s at %s: %s%s", f.Code, f.Path, f.Message, more)
}

var revisionPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ParseExecution strictly decodes a submitted policy. Unknown fields,
// wrong types, unknown modes, bad revisions, relative or unclean
// workspaces, out-of-range ceilings, duplicate scopes and more than
// MaxScopes scopes are errors, and every one of them is reported, each at
// its own path: one bad member hides no other. Submitted receiptId/approvedAt values are
// accepted syntactically and then discarded: only the server mints them.
func ParseExecution(data []byte) (Execution, error) { return parseExecution(data, false) }

// Store reads and writes the execution policy in the settings table.
type Store struct {
	db  *store.DB
	now func() time.Time
	key []byte
}

// NewStore returns a Store; now stamps receipts (UTC; nil selects the real
// clock) and key (see LoadReceiptKey) signs and verifies them. Without a
// key no receipt verifies and none can be issued.
func NewStore(db *store.DB, now func() time.Time, key []byte) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{db: db, now: now, key: key}
}

// StoredPolicyError reports a stored execution policy that does not pass
// validation on read (hand-edited, corrupted, or carrying a receipt
// Gatehouse cannot verify). Every script is refused until a valid policy
// is saved: the policy fails closed.
type StoredPolicyError struct{ Fields []FieldError }

func (e *StoredPolicyError) Error() string {
	msg := "the stored value is invalid"
	if len(e.Fields) > 0 {
		f := e.Fields[0]
		msg = fmt.Sprintf("%s at %s: %s", f.Code, f.Path, f.Message)
		if len(e.Fields) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(e.Fields)-1)
		}
	}
	return "policy: the stored execution policy is not valid, so no script runs until the policy is saved again: " + msg
}

// Get returns the stored policy, validated again as on save and with every
// receipt verified, or DefaultExecution when none is stored. A stored value
// that fails is a *StoredPolicyError (fail closed), never a repaired value.
func (s *Store) Get(ctx context.Context) (Execution, error) {
	raw, err := s.db.Get(ctx, Namespace, ExecutionKey)
	if errors.Is(err, store.ErrNotFound) {
		return DefaultExecution(), nil
	}
	if err != nil {
		return Execution{}, err
	}
	return s.decodeStored(raw)
}

// decodeStored validates a stored value and verifies its receipts.
func (s *Store) decodeStored(raw []byte) (Execution, error) {
	p, err := parseExecution(raw, true)
	var ve *ValidationError
	if errors.As(err, &ve) {
		return Execution{}, &StoredPolicyError{Fields: ve.Fields}
	}
	if err != nil {
		return Execution{}, err
	}
	var bad []FieldError
	for i, sc := range p.Trusted {
		if sc.ReceiptID != nil && !verifyReceipt(s.key, sc) {
			msg := "the receipt was not issued by this Gatehouse for this scope"
			if len(s.key) == 0 {
				msg = "the receipt cannot be verified: the receipt key is unavailable"
			}
			bad = append(bad, FieldError{Issue: strictjson.Issue{Code: "unverified_receipt", Path: fmt.Sprintf("$.trusted[%d].receiptId", i), Message: msg}})
		}
	}
	if len(bad) > 0 {
		return Execution{}, &StoredPolicyError{Fields: bad}
	}
	return p, nil
}

// Set validates submitted and stores it atomically, issuing receipts: a
// scope identical to a stored one keeps its (verified) receipt; a new or
// changed scope gets a fresh verifiable receipt and UTC time only when the
// policy is saved in trusted_revisions mode, and stays a draft otherwise.
// A removed scope's receipt is gone for good. An invalid stored value
// passes no receipt on (saving replaces it). On any error nothing changes.
func (s *Store) Set(ctx context.Context, submitted []byte) (Execution, error) {
	next, err := ParseExecution(submitted)
	if err != nil {
		return Execution{}, err
	}
	err = s.db.Update(ctx, Namespace, ExecutionKey, func(old json.RawMessage, ok bool) (json.RawMessage, error) {
		receipts := map[string]Scope{}
		if ok {
			if prev, err := s.decodeStored(old); err == nil {
				for _, sc := range prev.Trusted {
					if sc.Approved() {
						receipts[sc.key()] = sc
					}
				}
			}
		}
		now := s.now().UTC().Truncate(time.Second)
		for i, sc := range next.Trusted {
			if prev, kept := receipts[sc.key()]; kept {
				next.Trusted[i].ReceiptID, next.Trusted[i].ApprovedAt = prev.ReceiptID, prev.ApprovedAt
			} else if next.Mode == ModeTrusted {
				if len(s.key) == 0 {
					return nil, errors.New("policy: the receipt key is unavailable, so no trusted scope can be approved")
				}
				id, at := issueReceipt(s.key, sc, now), now
				next.Trusted[i].ReceiptID, next.Trusted[i].ApprovedAt = &id, &at
			}
		}
		return json.Marshal(next)
	})
	if err != nil {
		return Execution{}, err
	}
	return next, nil
}

// Match returns the approved scope that lets agentID run revision in
// workspace with the given limits, if the policy is in trusted_revisions
// mode and such a scope exists.
func (p Execution) Match(revision, agentID, workspace string, timeoutMs, maxOutputBytes int) (Scope, bool) {
	if p.Mode != ModeTrusted {
		return Scope{}, false
	}
	for _, s := range p.Trusted {
		if s.Approved() && s.Revision == revision && s.AgentID == agentID && s.Workspace == workspace &&
			timeoutMs <= s.TimeoutMsCeiling && maxOutputBytes <= s.MaxOutputBytesCeiling {
			return s, true
		}
	}
	return Scope{}, false
}

// Package consent holds run-scoped, one-use consent: live runs, the
// proposals they raise, their human decisions and their single
// consumption, plus approved workflow plans. Everything lives in memory;
// a new process recovers nothing, so no grant outlives the process that
// issued it.
//
// Proposals (manager.go), workflow plans (plan.go) and capture grants
// (grant.go) are kinds of one pending request (pending.go): raised,
// expired, listed, decided, withdrawn and waited for the same way, with
// one rule for refused decisions, on a Clock that signals when a window
// closes (clock.go). Each kind adds only how a newer request replaces it
// and how an approved one is consumed.
package consent

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Limits of the consent model.
const (
	Window             = 5 * time.Minute
	MaxProposalsPerRun = 64
	MaxPendingPerAgent = 16 // proposals waiting for a person, across the agent's runs
	MaxPlanSteps       = 16
)

// State is a proposal's state. Pending and Approved are live; every other
// state is terminal.
type State string

// The states.
const (
	Pending        State = "pending"
	Approved       State = "approved"
	Denied         State = "denied"
	Consumed       State = "consumed"
	Expired        State = "expired"
	Stale          State = "stale"
	BindingChanged State = "binding_changed"
	PolicyRefused  State = "policy_refused"
	Cancelled      State = "cancelled"
)

// Terminal reports whether no further transition is possible.
func (s State) Terminal() bool { return s != Pending && s != Approved }

// Error is a refused consent operation with a stable code.
type Error struct {
	Code string
	Msg  string
}

func (e *Error) Error() string { return "consent: " + e.Code + ": " + e.Msg }

// RefusalCode is the stable code a refused launch reports.
func (e *Error) RefusalCode() string { return e.Code }

// RefusalRule is the rule a launch refused by this error is recorded
// under: "consent: <code>" (never the person who approved earlier).
func (e *Error) RefusalRule() string { return "consent: " + e.Code }

func refuse(code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Code returns err's stable code, or "" when err is not a consent error.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Workspace identifies a resolved workspace.
type Workspace struct {
	Path string `json:"path"`
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
}

// Runtime identifies the pinned Node runtime.
type Runtime struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	SHA256  string `json:"sha256"`
}

// Binding is everything a consent is for. Any difference at consumption
// time is a changed binding, and the consent is void.
type Binding struct {
	AgentID          string    `json:"agentId"`
	RunID            string    `json:"runId"`
	Skill            string    `json:"skill"`
	Workspace        Workspace `json:"workspace"`
	Revision         string    `json:"revision"`
	InvocationDigest string    `json:"invocationDigest"`
	Runtime          Runtime   `json:"runtime"`
	TimeoutMs        int       `json:"timeoutMs"`
	MaxOutputBytes   int       `json:"maxOutputBytes"`
}

// Digest is the SHA-256 of the exact invocation bytes, the only form in
// which consent remembers them.
func Digest(invocation []byte) string {
	sum := sha256.Sum256(invocation)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

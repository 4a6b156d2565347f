// Package confine confines the scripts Gatehouse launches with Landlock
// (and, where one can be made, a network namespace), through a small
// re-exec launcher that runs between fork and the exec of the script's
// runtime: the launcher is this same executable, started with a request in
// its environment; it sets no_new_privs, applies the Landlock ruleset it
// builds itself from the request, reports exactly what it enforced on a
// pipe, marks every descriptor above 3 close-on-exec and execs the target.
//
// A program that launches through this package must call MaybeLaunch at
// the very start of main (and of TestMain in tests that launch).
package confine

import (
	"errors"
	"fmt"
	"strings"
)

// Filesystem and network settings (Security settings, docs/process-ownership.md).
const (
	FilesystemWorkspace = "workspace"
	FilesystemOff       = "off"
	NetworkDeny         = "deny"
	NetworkAllow        = "allow"
)

// Names of what a launch can enforce, as the envelope's enforced and
// not_enforced lists state them.
const (
	Filesystem          = "filesystem"
	TCP                 = "tcp"
	UDP                 = "udp"
	Signals             = "signals"
	AbstractUnixSockets = "abstract_unix_sockets"
)

// CodeUnavailable is the refusal code when the chosen confinement cannot
// be enforced on this kernel.
const CodeUnavailable = "confinement_unavailable"

// Settings is the person's confinement choice. The zero value is not
// valid; Default is workspace + deny.
type Settings struct {
	Filesystem string `json:"filesystem"`
	Network    string `json:"network"`
}

// Default returns the default settings: confined to the workspace, no network.
func Default() Settings { return Settings{Filesystem: FilesystemWorkspace, Network: NetworkDeny} }

// Validate reports the first invalid field with its JSON path.
func (s Settings) Validate() error {
	if s.Filesystem != FilesystemWorkspace && s.Filesystem != FilesystemOff {
		return fmt.Errorf("$.filesystem: must be %q or %q, not %q", FilesystemWorkspace, FilesystemOff, s.Filesystem)
	}
	if s.Network != NetworkDeny && s.Network != NetworkAllow {
		return fmt.Errorf("$.network: must be %q or %q, not %q", NetworkDeny, NetworkAllow, s.Network)
	}
	return nil
}

// Report is what a launcher enforced for one launch (the envelope's
// confinement object). Every feature is in exactly one of the two lists.
type Report struct {
	Filesystem  string   `json:"filesystem"`
	Network     string   `json:"network"`
	ABI         int      `json:"abi"`
	Enforced    []string `json:"enforced"`
	NotEnforced []string `json:"not_enforced"`
}

// Has reports whether feature is in the enforced list.
func (r *Report) Has(feature string) bool {
	if r == nil {
		return false
	}
	for _, f := range r.Enforced {
		if f == feature {
			return true
		}
	}
	return false
}

// Confined reports whether the launch enforced everything "confined: can
// write only the workspace and its own temporary folder; no network"
// promises: the filesystem rules, TCP and UDP.
func (r *Report) Confined() bool {
	return r.Has(Filesystem) && r.Has(TCP) && r.Has(UDP)
}

// Covers reports whether r enforces at least what want enforces: a run
// under r is confined no less than one under want.
func (r *Report) Covers(want *Report) bool {
	if want == nil {
		return true
	}
	for _, f := range want.Enforced {
		if !r.Has(f) {
			return false
		}
	}
	return true
}

// Summary is a one-line human statement of the report.
func (r *Report) Summary() string {
	if r == nil {
		return "not confined (no launcher report)"
	}
	s := fmt.Sprintf("filesystem %s, network %s, Landlock ABI %d; enforced: %s", r.Filesystem, r.Network, r.ABI, list(r.Enforced))
	if len(r.NotEnforced) > 0 {
		s += "; not enforced: " + list(r.NotEnforced)
	}
	return s
}

func list(l []string) string {
	if len(l) == 0 {
		return "nothing"
	}
	return strings.Join(l, ", ")
}

// UnavailableError says why the chosen settings cannot be enforced.
type UnavailableError struct{ Reason string }

func (e *UnavailableError) Error() string { return "confinement unavailable: " + e.Reason }

// RefusalCode is the envelope error code of the refusal.
func (e *UnavailableError) RefusalCode() string { return CodeUnavailable }

// IsUnavailable reports whether err is an UnavailableError.
func IsUnavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u)
}

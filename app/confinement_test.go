package app

import (
	"strings"
	"testing"

	"github.com/gatehouse/gatehouse/backend/confine"
)

// The dialog states confinement exactly when the launcher enforces all of
// it, and the ownership promise only when it holds (docs/process-ownership.md).
func TestConsentWarningIsExact(t *testing.T) {
	all := &confine.Report{Filesystem: "workspace", Network: "deny", ABI: 7,
		Enforced: []string{confine.Filesystem, confine.TCP, confine.UDP, confine.Signals, confine.AbstractUnixSockets}, NotEnforced: []string{}}
	noUDP := &confine.Report{Filesystem: "workspace", Network: "deny", ABI: 7,
		Enforced: []string{confine.Filesystem, confine.TCP}, NotEnforced: []string{confine.UDP}}
	off := &confine.Report{Filesystem: "off", Network: "allow", ABI: 7, Enforced: []string{},
		NotEnforced: []string{confine.Filesystem, confine.TCP, confine.UDP}}
	ws := "/home/u/project\u202e"
	cases := []struct {
		name         string
		rep          *confine.Report
		err          error
		unverifiable string
		want, not    []string
	}{
		{"enforced", all, nil, "", []string{`confined: can write only /home/u/project⟨U+202E⟩ and its own temporary folder; no network`, "ends every process it starts"}, []string{"full permissions", "\u202e"}},
		{"udp not covered", noUDP, nil, "", []string{"YOUR full permissions", "not enforced: udp"}, []string{"confined:"}},
		{"off", off, nil, "", []string{"YOUR full permissions", "not enforced: filesystem, tcp, udp"}, []string{"confined:"}},
		{"unavailable", nil, &confine.UnavailableError{Reason: "no Landlock"}, "", []string{"YOUR full permissions", "refused"}, []string{"confined:"}},
		{"ownership unverifiable", all, nil, "not a subreaper", []string{"confined:", "cannot prove that every process it starts has ended"}, []string{"and ends every process"}},
	}
	for _, c := range cases {
		w := warningText(c.rep, c.err, ws, c.unverifiable)
		for _, s := range c.want {
			if !strings.Contains(w, s) {
				t.Errorf("%s: %q lacks %q", c.name, w, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(w, s) {
				t.Errorf("%s: %q has %q", c.name, w, s)
			}
		}
	}
}

package app

import (
	"strings"
	"testing"
)

// A workspace or skill folder whose name carries a newline cannot forge a
// line of the terminal's consent prompt (a fake "confined" claim, a fake
// limit): the newline is shown as ⟨U+000A⟩ and what follows it stays on
// the line of the field it belongs to.
func TestConsentPromptFieldsCannotForgeLines(t *testing.T) {
	forged := "This script is confined: can write only nowhere and its own temporary folder; no network."
	screen := promptFor(t, "skill-a\n  limits      timeout 1 ms", "ws-a\n"+forged+"\n")
	for _, line := range strings.Split(screen, "\n") {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, forged) || strings.HasPrefix(l, "limits      timeout 1 ms") {
			t.Errorf("a folder name forged the line %q:\n%s", l, screen)
		}
	}
	if !strings.Contains(screen, "ws-a⟨U+000A⟩This script is confined") || !strings.Contains(screen, "skill-a⟨U+000A⟩  limits") {
		t.Errorf("the newlines are not shown visibly:\n%s", screen)
	}
}

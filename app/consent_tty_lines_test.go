package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace or skill folder whose name carries a newline cannot forge a
// line of the terminal's consent prompt (a fake "confined" claim, a fake
// limit): the newline is shown as ⟨U+000A⟩ and what follows it stays on
// the line of the field it belongs to.
func TestConsentPromptFieldsCannotForgeLines(t *testing.T) {
	forged := "This script is confined: can write only nowhere and its own temporary folder; no network."
	src := markerBundle(t)
	skill := filepath.Join(t.TempDir(), "skill-a\n  limits      timeout 1 ms")
	if err := os.CopyFS(skill, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(t.TempDir(), "ws-a\n"+forged+"\n")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	term := newScriptedTerminal("n")
	r := cliWith(t, dataEnv(t), cliOptions{stdin: `{"note":"hi"}`, terminal: term}, "skill", "run", skill, "--input", "-", "--workspace", ws)
	screen := term.Screen()
	if !strings.Contains(screen, consentPrompt) {
		t.Fatalf("no prompt (status %d, stderr %s):\n%s", r.status, r.stderr, screen)
	}
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

package app

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// consentPrompt is the question the terminal asker ends its summary with.
const consentPrompt = "Approve this run? [y/N] "

// scriptedTerminal is a controlling terminal in process: it gives the
// answer line only once the prompt was written to it (a read before the
// prompt fails the run), keeps every byte written as the screen, and
// records its closing.
type scriptedTerminal struct {
	answer string

	mu     sync.Mutex
	screen strings.Builder
	input  *strings.Reader
	reads  int
	closed bool
}

func newScriptedTerminal(answer string) *scriptedTerminal {
	return &scriptedTerminal{answer: answer}
}

func (s *scriptedTerminal) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, os.ErrClosed
	}
	return s.screen.Write(p)
}

func (s *scriptedTerminal) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, os.ErrClosed
	}
	if s.input == nil {
		if !strings.HasSuffix(s.screen.String(), consentPrompt) {
			return 0, errors.New("scripted terminal: read before the consent prompt was shown")
		}
		s.input = strings.NewReader(s.answer + "\n")
	}
	s.reads++
	return s.input.Read(p)
}

func (s *scriptedTerminal) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

func (s *scriptedTerminal) Screen() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.screen.String()
}

// TestSkillRunAsksOnTheTerminal: skill run shows the consent summary on
// the controlling terminal and runs only after "y" or "yes" (any case,
// surrounding blanks ignored); every other answer, and no terminal at
// all, refuses without running anything. The terminal is closed after
// the run. In process; TestSkillRunAsksOnARealTerminal is the same on a
// real pseudo-terminal with the built binary.
func TestSkillRunAsksOnTheTerminal(t *testing.T) {
	skill := markerBundle(t)
	input := filepath.Join(t.TempDir(), "in.json")
	os.WriteFile(input, []byte(`{"note":"hi"}`), 0o644)
	env := dataEnv(t)
	runWith := func(t *testing.T, answer string) (cliResult, *scriptedTerminal, string) {
		t.Helper()
		ws := t.TempDir()
		term := newScriptedTerminal(answer)
		r := cliWith(t, env, cliOptions{terminal: term}, "skill", "run", skill, "--input", input, "--workspace", ws)
		if !term.closed {
			t.Error("the terminal was not closed after the run")
		}
		return r, term, ws
	}
	succeeded := 0
	for _, answer := range []string{"yes", "y", "YES", " Yes\t"} {
		t.Run("approve "+answer, func(t *testing.T) {
			r, term, ws := runWith(t, answer)
			var e map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &e); err != nil || r.status != 0 || e["status"] != "succeeded" {
				t.Fatalf("status %d stdout %s stderr %s screen %s", r.status, r.stdout, r.stderr, term.Screen())
			}
			succeeded++
			screen := term.Screen()
			wantApproved := "approved    same revision you approved on "
			if succeeded == 1 {
				wantApproved = "approved    new skill"
			}
			for _, want := range []string{"sha256:", wantApproved, "scripts/run.mjs", ws, "timeout 5000 ms", `{"note":"hi"}`,
				"This script is confined: can write only", "and its own temporary folder; no network", "ends every process it starts"} {
				if !strings.Contains(screen, want) {
					t.Errorf("consent summary lacks %q:\n%s", want, screen)
				}
			}
			if strings.Contains(r.stdout, "Approve this run") || strings.Contains(r.stderr, "Approve this run") {
				t.Error("the prompt went to stdout or stderr instead of the terminal")
			}
			if b, err := os.ReadFile(filepath.Join(ws, "ran")); err != nil || string(b) != `{"note":"hi"}` {
				t.Fatalf("script did not run in the workspace: %v", err)
			}
		})
	}
	for _, answer := range []string{"n", "", "yess", "Y es", "no", "y\x1b[2J"} {
		t.Run("deny "+answer, func(t *testing.T) {
			r, term, ws := runWith(t, answer)
			var e map[string]any
			json.Unmarshal([]byte(r.stdout), &e)
			if r.status == 0 || e["status"] != "refused" {
				t.Fatalf("status %d stdout %s stderr %s", r.status, r.stdout, r.stderr)
			}
			if !strings.Contains(term.Screen(), "approved    same revision you approved on ") {
				t.Errorf("the revision approved above is not named as such:\n%s", term.Screen())
			}
			if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
				t.Fatal("a denied script ran")
			}
		})
	}
	t.Run("terminal ends before an answer", func(t *testing.T) {
		ws := t.TempDir()
		term := &eofTerminal{}
		r := cliWith(t, env, cliOptions{terminal: term}, "skill", "run", skill, "--input", input, "--workspace", ws)
		var e map[string]any
		json.Unmarshal([]byte(r.stdout), &e)
		if r.status == 0 || e["status"] == "succeeded" {
			t.Fatalf("status %d stdout %s stderr %s", r.status, r.stdout, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Fatal("ran without an answer")
		}
	})
	t.Run("no terminal", func(t *testing.T) {
		ws := t.TempDir()
		r := cliWith(t, env, cliOptions{stdin: `{"note":"hi"}`}, "skill", "run", skill, "--input", "-", "--workspace", ws)
		if r.status == 0 || !strings.Contains(r.stderr, `"code":"permission_required"`) || r.stdout != "" {
			t.Fatalf("status %d stdout %q stderr %q", r.status, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stderr, "this run needs your approval on a terminal, and there is none; nothing was run") {
			t.Errorf("stderr %q", r.stderr)
		}
		if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
			t.Fatal("ran without consent")
		}
	})
	t.Run("history has every attempt and refusal", func(t *testing.T) {
		r := cli(t, env, "runs", "--json")
		got := decode[struct {
			Runs []struct{ Status, Skill, Agent string }
		}](t, r.stdout)
		statuses := map[string]int{}
		for _, run := range got.Runs {
			statuses[run.Status]++
			if run.Skill != "marker-skill" || run.Agent != "local" {
				t.Errorf("run %+v", run)
			}
		}
		// 4 approved; 6 denied, 1 unanswered and 1 without a terminal refused.
		if statuses["succeeded"] != 4 || statuses["refused"] != 8 {
			t.Fatalf("history %v", statuses)
		}
	})
}

// eofTerminal is a terminal that shows the prompt and then ends (the
// person closed it) without an answer.
type eofTerminal struct{ screen strings.Builder }

func (e *eofTerminal) Write(p []byte) (int, error) { return e.screen.Write(p) }
func (e *eofTerminal) Read([]byte) (int, error)    { return 0, io.EOF }
func (e *eofTerminal) Close() error                { return nil }

// TestProgressOnlyOnATerminal: the one-line run summary goes to stderr
// only when stderr is a terminal (IO.IsTerminal), never into a pipe.
func TestProgressOnlyOnATerminal(t *testing.T) {
	skill := markerBundle(t)
	env := dataEnv(t)
	for _, tty := range []bool{false, true} {
		r := cliWith(t, env, cliOptions{stdin: `{"note":"x"}`, terminal: newScriptedTerminal("y"), isTTY: tty}, "skill", "run", skill, "--input", "-", "--workspace", t.TempDir())
		if r.status != 0 {
			t.Fatalf("tty %v: status %d stderr %s", tty, r.status, r.stderr)
		}
		if got := strings.Contains(r.stderr, "gatehouse: succeeded in "); got != tty {
			t.Errorf("tty %v: summary on stderr %v: %q", tty, got, r.stderr)
		}
	}
}

// TestConsentPromptNeverSendsEscapes: a workspace and a skill folder (the
// skill's name) whose names carry terminal escape sequences, a bell and a
// bidirectional override reach the consent prompt as visible ⟨U+XXXX⟩
// markers, never as live bytes.
func TestConsentPromptNeverSendsEscapes(t *testing.T) {
	hostile := "x\x1b]0;pwned\a\x1b[2J\u202eexe"
	screen := promptFor(t, "skill-"+hostile, "ws-"+hostile)
	for _, live := range []string{"\x1b", "\a", "\u202e"} {
		if strings.Contains(screen, live) {
			t.Errorf("the terminal received %q live:\n%q", live, screen)
		}
	}
	if !strings.Contains(screen, "ws-x⟨U+001B⟩]0;pwned⟨U+0007⟩⟨U+001B⟩[2J⟨U+202E⟩exe") || !strings.Contains(screen, "  skill       skill-x⟨U+001B⟩]0;pwned⟨U+0007⟩") {
		t.Errorf("the hidden characters are not shown visibly:\n%s", screen)
	}
}

// promptFor runs a copy of the marker skill, in a folder named skillName,
// on a workspace named wsName, answers "n" on a scripted terminal and
// returns what the terminal showed (failing when no prompt was shown).
func promptFor(t *testing.T, skillName, wsName string) string {
	t.Helper()
	src := markerBundle(t)
	skill := filepath.Join(t.TempDir(), skillName)
	if err := os.CopyFS(skill, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(t.TempDir(), wsName)
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	term := newScriptedTerminal("n")
	r := cliWith(t, dataEnv(t), cliOptions{stdin: `{"note":"hi"}`, terminal: term}, "skill", "run", skill, "--input", "-", "--workspace", ws)
	screen := term.Screen()
	if !strings.Contains(screen, consentPrompt) {
		t.Fatalf("no prompt (status %d, stderr %s):\n%s", r.status, r.stderr, screen)
	}
	return screen
}

package capture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// normalizedScript prints, near the right margin of a 40-column terminal,
// text whose normalized form is longer or shorter than what it printed:
// a child's pid (printed before it is sampled: as the raw frame shows it),
// the temporary root (inside $HOME), a working directory that wraps, a
// secret alias value, the root's pid, a pattern's match, a secret written
// in two pieces (held back at the end of the first chunk, then replaced
// whole), the start of a secret that is not one after all, and an echoed
// sensitive input; then it is resized and prints more of the same (the
// child's pid again, sampled by then).
const normalizedScript = `sleep 0.5 & printf '%36s %s|\n' c "$!"; printf '%33s' 'home:'; printf '%s|\n' "$HOME"; printf '%30s%s/%s\n' x "$PWD" "$PWD"; ` +
	`printf '%35s%s|\n' s "$SECRET"; printf '%35s %s|token-12345|\n' p "$$"; ` +
	`printf '%36s%s' q "${SECRET%-42}"; sleep 0.05; printf '%s|\n' -42; printf '%36ss3cr' r; sleep 0.05; printf 'Xyz|\n'; ` +
	`printf '%32s' 'password: '; read x; ` +
	`sleep 0.3; printf '%44s%s|%s|%s|\n' y "$SECRET" "$HOME" "$!"; printf '\033[2;30H%s\033[5;1Hend' "$HOME"`

// normalizedScenario is normalizedScript on a 40x8 terminal with a secret
// alias, a pattern, a sensitive input echoed and a resize to 50x10.
func normalizedScenario(t *testing.T, secret, typed string, edit func(m obj)) (*Scenario, Options) {
	return shScenario(t, normalizedScript, func(m obj) {
		m["terminal"] = obj{"columns": 40, "rows": 8}
		m["environment"] = obj{"PATH": "/usr/bin:/bin", "SECRET": secret}
		m["secret_aliases"] = []any{"SECRET"}
		m["normalization"] = obj{"patterns": []any{obj{"pattern": `token-[0-9]+`, "replacement": "<token>"}}}
		m["events"] = []any{
			obj{"type": "input", "at_ms": 300, "data": typed + "\r", "sensitive": true},
			obj{"type": "resize", "at_ms": 450, "columns": 50, "rows": 10},
		}
		if edit != nil {
			edit(m)
		}
	})
}

// TestCapturedNormalizedFramesMatchXterm captures output whose
// normalization changes the length of text on the screen (normalizedScript)
// and checks that every rendered frame is xterm.js's screen after the
// record's raw frames and resizes up to it: the renderer renders the
// stream that is recorded, not the target's bytes before normalization.
func TestCapturedNormalizedFramesMatchXterm(t *testing.T) {
	node := requireNode(t)
	const secret, typed = "s3cretVALUE-42", "hunter2-typed"
	sc, opts := normalizedScenario(t, secret, typed, nil)
	rec := capture(t, sc, opts)
	out := output(rec)
	// the echo of the input comes after the prompt unless the shell was
	// slow to start (under load), so only its placeholder is looked for
	for _, want := range []string{"<temporary-root>/home|", "<working-directory>/<working-directory>\r\n", "s<redacted>|",
		"<pid>|<token>|", "q<redacted>|", "rs3crXyz|", "<redacted>\r\n", "y<redacted>|<temporary-root>/home|<pid>|"} {
		if !strings.Contains(out, want) {
			t.Errorf("the raw frames lack %q: %q", want, out)
		}
	}
	for _, s := range []string{secret, typed, opts.TempDir, sc.WorkingDirectory} {
		if strings.Contains(out, s) {
			t.Errorf("the raw frames hold %q", s)
		}
	}
	checkFramesMatchXterm(t, node, sc, rec)
	last := rec.RenderedFrames[len(rec.RenderedFrames)-1]
	if last.Columns != 50 || !strings.Contains(strings.Join(last.Lines, ""), "end") {
		t.Errorf("last rendered frame %dx%d %q", last.Columns, last.Rows, last.Lines)
	}
}

// TestCapturedFramesMatchXtermAfterTruncation: the rendered frame after
// the raw chunk cut at limits.output_bytes is the render of what was
// recorded of it (normalized), not of the bytes the target wrote.
func TestCapturedFramesMatchXtermAfterTruncation(t *testing.T) {
	node := requireNode(t)
	sc, opts := shScenario(t, `printf '%s\n' "$HOME" "$HOME"; sleep 0.3; for i in 1 2 3 4 5 6 7 8; do printf '%s|%s\n' "$PWD" "$HOME"; done; sleep 0.3; echo more`, func(m obj) {
		m["terminal"] = obj{"columns": 30, "rows": 4}
		m["limits"] = obj{"output_bytes": 1000}
	})
	rec := capture(t, sc, opts)
	if !rec.Truncated || len(rec.Frames) < 2 || len(rec.RenderedFrames) < 2 {
		t.Fatalf("truncated %v, %d raw frames, %d rendered: %v", rec.Truncated, len(rec.Frames), len(rec.RenderedFrames), rec.Limitations)
	}
	checkFramesMatchXterm(t, node, sc, rec)
}

// TestRendererNeverReceivesSecrets runs the renderer helper through a
// wrapper that logs everything the capture sends it: the secret alias
// value, the sensitive input and the temporary root never reach it, only
// their placeholders.
func TestRendererNeverReceivesSecrets(t *testing.T) {
	node := requireNode(t)
	const secret, typed = "s3cretVALUE-42", "hunter2-typed"
	dir := t.TempDir()
	logPath := filepath.Join(dir, "helper-stdin")
	wrapper := filepath.Join(dir, "node")
	// the helper's stdin is its protocol; descriptor 3 (its script) and
	// stdout pass through the pipeline unchanged
	if err := os.WriteFile(wrapper, []byte("#!/bin/sh\n/usr/bin/tee -a '"+logPath+"' | '"+node+"' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	sc, opts := normalizedScenario(t, secret, typed, nil)
	opts.Node = wrapper
	rec := capture(t, sc, opts)
	got, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "<redacted>") || !strings.Contains(string(got), "<temporary-root>/home|") {
		t.Fatalf("the helper's input (%d bytes) lacks the placeholders; the wrapper saw nothing? %q", len(got), got)
	}
	for _, s := range []string{secret, typed, opts.TempDir} {
		if strings.Contains(string(got), s) {
			t.Errorf("the renderer helper received %q: %s", s, excerpt(string(got), s))
		}
	}
	if len(rec.RenderedFrames) == 0 {
		t.Error("no rendered frames")
	}
}

// TestSecretsComposedOnTheScreen: a secret restyled in the middle is
// redacted in the raw frame itself, so its screen is still the render of
// the raw frames; a secret composed by moving the cursor (no redaction of
// the raw frame can see it) is redacted in the rendered frames, and the
// record says those frames differ from the raw frames' screen.
func TestSecretsComposedOnTheScreen(t *testing.T) {
	node := requireNode(t)
	const secret = "s3cretVALUE-42"
	run := func(t *testing.T, script string, pieces bool) (*Scenario, *Record) {
		sc, opts := shScenario(t, script, func(m obj) {
			m["environment"] = obj{"PATH": "/usr/bin:/bin", "SECRET": secret}
			m["secret_aliases"] = []any{"SECRET"}
		})
		rec := capture(t, sc, opts)
		b, err := json.Marshal(rec.RenderedFrames)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("a rendered frame shows the secret: %s", excerpt(string(b), secret))
		}
		if out := output(rec); !pieces && (strings.Contains(out, "s3cret") || strings.Contains(out, "VALUE-42")) {
			t.Errorf("the raw frames show the secret: %q", out)
		}
		return sc, rec
	}
	composed := func(l string) bool { return strings.Contains(l, "composed from pieces") }
	t.Run("restyled", func(t *testing.T) {
		sc, rec := run(t, `printf 's3cret\033[1mVALUE-42\033[0m|\n'`, false)
		if out := output(rec); out != "<redacted>\x1b[1m<redacted>\x1b[0m|\r\n" {
			t.Errorf("raw frames %q", out)
		}
		checkFramesMatchXterm(t, node, sc, rec)
		if slices.ContainsFunc(rec.Limitations, composed) {
			t.Errorf("a redacted raw frame is said to differ from its screen: %v", rec.Limitations)
		}
	})
	t.Run("cursor", func(t *testing.T) {
		_, rec := run(t, `printf '    etVALUE-42|\rs3cr\n'`, true)
		if !slices.ContainsFunc(rec.Limitations, func(l string) bool {
			return strings.Contains(l, "from rendered frame 0 on, a screen showed a secret value composed from pieces")
		}) {
			t.Errorf("the redacted screen is not listed: %v", rec.Limitations)
		}
	})
}

package app

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// hostileBundle writes a bundle whose frontmatter (through YAML's "\e" and
// "\a" escapes) carries terminal escape sequences, a bidirectional
// override and a zero-width space in its description, license, metadata
// and an unknown field's key.
func hostileBundle(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "evil-skill")
	os.MkdirAll(dir, 0o755)
	skill := "---\nname: evil-skill\n" +
		`description: "Harmless\e]0;pwned-title\a\e[2J\e[31mRED \u202Eexe.txt\u200B"` + "\n" +
		`license: "MIT\e[5m"` + "\n" +
		`"x-hook\e[8m": "hidden\e[0m"` + "\n---\nBody.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skill), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// onPTY runs the binary with stdout and stderr on a real pseudo-terminal
// and returns every byte the terminal received.
func onPTY(t *testing.T, bin string, env []string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = ptySysProcAttr()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&screen, ptmx); close(done) }() // ends with EIO once the child is gone
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, screen.Bytes())
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	return screen.Bytes()
}

// TestSkillListAndInspectNeverSendEscapes: a bundle's escape sequences,
// bidi override and zero-width characters reach the person's terminal as
// visible ⟨U+XXXX⟩ markers, never as live bytes.
func TestSkillListAndInspectNeverSendEscapes(t *testing.T) {
	bin := buildBinary(t)
	root := hostileBundle(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "GATEHOUSE_DATA_DIR=" + filepath.Join(t.TempDir(), "data")}
	onPTY(t, bin, env, "skill", "roots", "add", root)
	for _, args := range [][]string{{"skill", "list"}, {"skill", "inspect", "evil-skill"}} {
		screen := onPTY(t, bin, env, args...)
		t.Logf("%v:\n%s", args, screen)
		for _, live := range []string{"\x1b", "\a", "\u202e", "\u200b"} {
			if bytes.Contains(screen, []byte(live)) {
				t.Errorf("%v: the terminal received %q live", args, live)
			}
		}
		if !strings.Contains(string(screen), "⟨U+001B⟩]0;pwned-title⟨U+0007⟩") || !strings.Contains(string(screen), "⟨U+202E⟩") {
			t.Errorf("%v: the hidden characters are not shown visibly", args)
		}
	}
}

func TestVisibleTextAndLine(t *testing.T) {
	for in, want := range map[string]string{
		"plain ascii, ünïcödé, 日本": "plain ascii, ünïcödé, 日本",
		"a\x1b[2Jb":                "a⟨U+001B⟩[2Jb",
		"rtl \u202eexe.txt":        "rtl ⟨U+202E⟩exe.txt",
		"zw\u200b\u200d\ufeff":     "zw⟨U+200B⟩⟨U+200D⟩⟨U+FEFF⟩",
		"isolate\u2067x\u2069":     "isolate⟨U+2067⟩x⟨U+2069⟩",
		"tag\U000E0041":            "tag⟨U+E0041⟩",
		"c1\u009b31m":              "c1⟨U+009B⟩31m",
		"bad\xffutf8":              "bad⟨0xFF⟩utf8",
		"line\u2028sep":            "line⟨U+2028⟩sep",
		"lines\nand\ttab\r":        "lines\nand\ttab⟨U+000D⟩",
	} {
		if got := visibleText(in); got != want {
			t.Errorf("visibleText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := visibleLine("a\nb\tc"); got != "a⟨U+000A⟩b⟨U+0009⟩c" {
		t.Errorf("visibleLine = %q", got)
	}
}

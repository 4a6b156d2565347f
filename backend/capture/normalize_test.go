package capture

import "testing"

// Small pids (as in a container) must not be replaced inside terminal
// control sequences, and a pid right after an SGR sequence is still a pid.
func TestPIDsAreNotReplacedInsideControlSequences(t *testing.T) {
	n, err := newNormalizer(&Scenario{Normalization: Normalization{PIDs: true, TimeBucketMS: 1}}, "/tmp/x")
	if err != nil {
		t.Fatal(err)
	}
	n.addPID(23)
	n.addPID(5)
	for in, want := range map[string]string{
		"pid 23 and 5\r\n":                       "pid <pid> and <pid>\r\n",
		"\x1b[23;5H23":                           "\x1b[23;5H<pid>",
		"\x1b[38;5;23mchild=5\x1b[0m":            "\x1b[38;5;23mchild=<pid>\x1b[0m",
		"\x1b]0;title 23\x07 23":                 "\x1b]0;title 23\x07 <pid>",
		"\x1b[1m23\x1b[0m x23 230 5.5":           "\x1b[1m<pid>\x1b[0m x23 230 <pid>.<pid>",
		"unterminated \x1b[23":                   "unterminated \x1b[23",
		"\x1b7\x1b[?1049h 23 \x1b8":              "\x1b7\x1b[?1049h <pid> \x1b8",
		"no escapes here: 523 23a a23 (23)":      "no escapes here: 523 23a a23 (<pid>)",
		"\x1b[23P\x1b[5@\x1b[23X\x1b[5;23r done": "\x1b[23P\x1b[5@\x1b[23X\x1b[5;23r done",
	} {
		if got := n.text(in); got != want {
			t.Errorf("text(%q) = %q, want %q", in, got, want)
		}
	}
}

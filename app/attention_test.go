package app

import (
	"strings"
	"testing"
	"unicode"
)

// TestNotifyTextNeverLive: what an agent controls (its name, the skill,
// the command) reaches the notification with no live control, bidi or
// markup character, and bounded.
func TestNotifyTextNeverLive(t *testing.T) {
	hostile := "bot\x1b]8;;http://evil\x07click\x1b[2J\r\nline\u202Etxt.exe\u2066x\u2069\u200F\u061C\u2028<b>&amp;</b>\u0085\xff"
	got := notifyText(hostile, 500)
	for _, r := range got {
		if unicode.IsControl(r) || isBidiControl(r) || r == 0x2028 || r == 0x2029 {
			t.Fatalf("live character U+%04X in %q", r, got)
		}
	}
	if strings.ContainsAny(got, "<>") || strings.Contains(got, "&amp;</b>") {
		t.Fatalf("markup reaches the notification: %q", got)
	}
	for _, want := range []string{`\u001b`, `\u202e`, `\u2066`, `\u0085`, `&lt;b&gt;`, "\uFFFD"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q: missing the visible %s", got, want)
		}
	}
	if s := notifyText(strings.Repeat("a", 61), 60); s != strings.Repeat("a", 60)+"…" {
		t.Errorf("61 characters at a limit of 60: %q", s)
	}
	if s := notifyText(strings.Repeat("a", 60), 60); s != strings.Repeat("a", 60) {
		t.Errorf("60 characters at a limit of 60: %q", s)
	}
}

// TestRequestNoticeSays: each kind of request says which agent asks to
// run what, with the untrusted parts made safe.
func TestRequestNoticeSays(t *testing.T) {
	evil := AgentRef{ID: "agent_1", Name: "helper\u202Egnp.exe"}
	cases := []struct {
		kind string
		v    any
		want []string
	}{
		{"proposal", ProposalView{ID: "p1", State: "pending", Agent: evil, Skill: "text-metrics\x1b[31m", Entrypoint: "scripts/run.mjs"}, []string{`helper\u202egnp.exe`, `text-metrics\u001b[31m`, "scripts/run.mjs"}},
		{"plan", PlanView{ID: "w1", State: "pending", Agent: evil, Steps: []PlanStepView{{Skill: "a"}, {Skill: "b"}}}, []string{"2 steps", "“a”, “b”", `helper\u202egnp.exe`}},
		{"grant", GrantView{ID: "g1", State: "pending", Agent: AgentRef{ID: "agent_2"}, Command: []string{"/bin/sh", "-c", "echo <hi>"}}, []string{"agent_2", "/bin/sh -c echo &lt;hi&gt;"}},
	}
	for _, c := range cases {
		n, state, ok := requestNotice(c.kind, c.v)
		if !ok || state != "pending" || n.Kind != c.kind {
			t.Fatalf("%s: %+v %q %v", c.kind, n, state, ok)
		}
		text := n.Summary + "\n" + n.Body
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q does not say %q", c.kind, text, w)
			}
		}
		if strings.ContainsRune(text, 0x202E) || strings.ContainsRune(text, 0x1b) {
			t.Errorf("%s: live control in %q", c.kind, text)
		}
	}
	if _, _, ok := requestNotice("proposal", "not a view"); ok {
		t.Error("a payload of the wrong type made a notice")
	}
}

package reactive

import (
	"fmt"
	"strings"
)

// Preflight returns what this engine refuses in a parsed scenario before
// the target launches, each issue at its JSON path below path: event
// triggers on terminal_rendered, lifecycle or replay_transition
// (CodeRefusedSource), send_signal selectors other than root
// (CodeRefusedSelector), and terminal_text literals holding one of
// redacted, the values the capture replaces in recorded text, which live
// predicates therefore never see (CodeUnmatchableText). Nil means the
// scenario may run.
func Preflight(sc *Scenario, path string, redacted []string) []Issue {
	var out []Issue
	for i, st := range sc.States {
		for j, t := range st.On {
			at := fmt.Sprintf("%s.states[%d].on[%d]", path, i, j)
			walk(t.When, at+".when", func(tr *Trigger, p string) {
				switch tr.Kind {
				case KindEvent:
					if why, refused := refusedSources[tr.Source]; refused {
						out = append(out, Issue{Code: CodeRefusedSource, Path: p + ".source",
							Message: fmt.Sprintf("event triggers on %s fail preflight: %s", tr.Source, why)})
					}
				case KindTerminalText:
					for _, r := range redacted {
						if r != "" && strings.Contains(tr.Text, r) {
							out = append(out, Issue{Code: CodeUnmatchableText, Path: p + ".text",
								Message: "the text holds a secret or sensitive input value, which recorded text never shows, so it can never match"})
							break
						}
					}
				}
			})
			for k, a := range t.Actions {
				if a.Type == ActionSendSignal && a.Selector != SelectorRoot {
					out = append(out, Issue{Code: CodeRefusedSelector, Path: fmt.Sprintf("%s.actions[%d].selector", at, k),
						Message: fmt.Sprintf("send_signal to %s fails preflight: only the root process may be signalled", a.Selector)})
				}
			}
		}
	}
	return out
}

package reactive

import "testing"

// docs/formats/reactive-scenario.md: "Sources terminal_rendered, lifecycle, replay_transition
// and non-root signal targets fail preflight before launch." Each refused
// source on its own, at its path, and an accepted source for contrast.
func TestPreflightRefusesEachSource(t *testing.T) {
	for source, refused := range map[string]bool{
		"terminal_rendered": true, "lifecycle": true, "replay_transition": true,
		"terminal_raw": false, "interaction": false, "process": false, "filesystem": false,
		"http": false, "websocket": false, "shim": false,
	} {
		doc := mutate(t, func(m obj) {
			exact := obj{"at_ms": 0}
			switch source {
			case "lifecycle":
				exact = obj{"event": "exit"}
			case "interaction":
				exact = obj{"type": "input"}
			}
			on(m, 0, 0)["when"] = obj{"kind": "event", "source": source, "exact": exact}
		})
		sc := mustParse(t, doc, Context{})
		pre := Preflight(sc, "$.reactive", nil)
		if !refused {
			if len(pre) != 0 {
				t.Errorf("%s: refused %v", source, pre)
			}
			continue
		}
		if len(pre) != 1 || pre[0].Code != CodeRefusedSource || pre[0].Path != "$.reactive.states[0].on[0].when.source" {
			t.Errorf("%s: preflight %v", source, pre)
		}
	}
}

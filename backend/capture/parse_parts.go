package capture

import (
	"math"

	"github.com/gatehouse/gatehouse/backend/internal/strictjson"
)

// events reads the event list: sorted by at_ms (ties keep their order),
// none after timeout_ms (checked only when timeout_ms itself is valid).
func (c *checker) events(m strictjson.Members, timeout int, timeoutOK bool) []Event {
	out := []Event{}
	prev := -1
	c.listField(m, "$", "events", 0, MaxEvents, func(_ int, e *strictjson.Node, at string) {
		ev, atOK := c.event(e, at)
		out = append(out, ev)
		if !atOK {
			return
		}
		switch {
		case ev.AtMS < prev:
			c.Add(at+".at_ms", CodeNotSorted, "at_ms %d is earlier than the previous event's %d; events must be sorted by at_ms", ev.AtMS, prev)
		case timeoutOK && ev.AtMS > timeout:
			c.Add(at+".at_ms", CodeAfterTimeout, "at_ms %d is after timeout_ms %d", ev.AtMS, timeout)
		}
		prev = max(prev, ev.AtMS)
	})
	return out
}

// event reads one event and reports whether its at_ms is valid.
func (c *checker) event(n *strictjson.Node, path string) (Event, bool) {
	typ, ok := c.Variant(n, path, "type", EventInput, EventResize, EventSignal)
	if !ok {
		return Event{}, false
	}
	var keys []string
	switch typ {
	case EventInput:
		keys = []string{"type", "at_ms", "data", "sensitive"}
	case EventResize:
		keys = []string{"type", "at_ms", "columns", "rows"}
	default:
		keys = []string{"type", "at_ms", "signal"}
	}
	em, _ := c.object(n, path, keys...)
	ev := Event{Type: typ}
	ev.AtMS, ok = c.ReqInt(em, path, "at_ms", 0, MaxTimeoutMS)
	switch typ {
	case EventInput:
		ev.Data, _ = c.ReqStr(em, path, "data")
		ev.Sensitive = c.boolField(em, path, "sensitive", false)
	case EventResize:
		ev.Columns, _ = c.ReqInt(em, path, "columns", 1, MaxTerminalSize)
		ev.Rows, _ = c.ReqInt(em, path, "rows", 1, MaxTerminalSize)
	default:
		if v, present := c.Required(em, path, "signal"); present {
			ev.Signal, _ = c.signalEnum(v, path+".signal")
		}
	}
	return ev, ok
}

// checkpoints reads the checkpoint list: unique names, "before" and
// "after_settlement" reserved.
func (c *checker) checkpoints(m strictjson.Members) []Checkpoint {
	out := []Checkpoint{}
	names := map[string]int{}
	c.listField(m, "$", "checkpoints", 0, MaxCheckpoints, func(i int, e *strictjson.Node, at string) {
		cm, ok := c.object(e, at, "name", "trigger")
		if !ok {
			return
		}
		var cp Checkpoint
		if name, ok := c.ReqStr(cm, at, "name"); ok {
			cp.Name = name
			first, dup := names[name]
			switch {
			case !strictjson.IsName(name, 64, "_-"):
				c.Add(at+".name", CodeInvalidName, "%q does not match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$", strictjson.Truncate(name, 80))
			case name == "before" || name == "after_settlement":
				c.Add(at+".name", CodeReservedName, "%q is reserved: Gatehouse always takes it", name)
			case dup:
				c.Add(at+".name", CodeDuplicateEntry, "checkpoint %q is already named by checkpoints[%d]", name, first)
			default:
				names[name] = i
			}
		}
		if v, ok := c.Required(cm, at, "trigger"); ok {
			cp.Trigger = c.trigger(v, at+".trigger")
		}
		out = append(out, cp)
	})
	return out
}

func (c *checker) trigger(n *strictjson.Node, path string) Trigger {
	typ, ok := c.Variant(n, path, "type", TriggerTime, TriggerTerminalLiteral, TriggerRootExit, TriggerSettled)
	if !ok {
		return Trigger{}
	}
	t := Trigger{Type: typ}
	switch typ {
	case TriggerTime:
		tm, _ := c.object(n, path, "type", "at_ms")
		t.AtMS, _ = c.ReqInt(tm, path, "at_ms", 0, MaxTimeoutMS)
	case TriggerTerminalLiteral:
		tm, _ := c.object(n, path, "type", "value", "occurrence")
		if s, ok := c.ReqStr(tm, path, "value"); ok && c.length(s, path+".value", 1, MaxLiteralChars) {
			t.Value = s
		}
		t.Occurrence, _ = c.IntField(tm, path, "occurrence", 1, MaxOccurrence, 1)
	default:
		c.object(n, path, "type")
	}
	return t
}

// shims reads the command shims: unique names, 1–100 routes each.
func (c *checker) shims(m strictjson.Members) []CommandShim {
	out := []CommandShim{}
	names := map[string]int{}
	c.listField(m, "$", "command_shims", 0, MaxCommandShims, func(i int, e *strictjson.Node, at string) {
		sm, ok := c.object(e, at, "name", "routes")
		if !ok {
			return
		}
		shim := CommandShim{Routes: []ShimRoute{}}
		if name, ok := c.ReqStr(sm, at, "name"); ok {
			shim.Name = name
			first, dup := names[name]
			switch {
			case !strictjson.IsName(name, 128, "._-"):
				c.Add(at+".name", CodeInvalidName, "%q does not match ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$", strictjson.Truncate(name, 140))
			case dup:
				c.Add(at+".name", CodeDuplicateEntry, "shim %q is already named by command_shims[%d]", name, first)
			default:
				names[name] = i
			}
		}
		c.listField(sm, at, "routes", 1, MaxShimRoutes, func(_ int, r *strictjson.Node, rat string) {
			shim.Routes = append(shim.Routes, c.route(r, rat))
		})
		out = append(out, shim)
	})
	return out
}

func (c *checker) route(n *strictjson.Node, path string) ShimRoute {
	r := ShimRoute{Arguments: []string{}, Outputs: []ShimOutput{}, MaxCalls: 1}
	rm, ok := c.object(n, path, "arguments", "outputs", "termination", "max_calls")
	if !ok {
		return r
	}
	c.listField(rm, path, "arguments", 0, math.MaxInt, func(_ int, e *strictjson.Node, at string) {
		if s, ok := c.Str(e, at); ok && c.noNUL(s, at) {
			r.Arguments = append(r.Arguments, s)
		}
	})
	c.listField(rm, path, "outputs", 0, MaxShimOutputs, func(_ int, e *strictjson.Node, at string) {
		om, ok := c.object(e, at, "at_ms", "stream", "data")
		if !ok {
			return
		}
		var o ShimOutput
		o.AtMS, _ = c.ReqInt(om, at, "at_ms", 0, MaxTimeoutMS)
		if v, ok := c.Required(om, at, "stream"); ok {
			o.Stream, _ = c.Enum(v, at+".stream", "stdout", "stderr")
		}
		o.Data, _ = c.ReqStr(om, at, "data")
		r.Outputs = append(r.Outputs, o)
	})
	if v, ok := c.Required(rm, path, "termination"); ok {
		r.Termination = c.termination(v, path+".termination")
	}
	r.MaxCalls, _ = c.IntField(rm, path, "max_calls", 1, MaxShimCalls, 1)
	return r
}

func (c *checker) termination(n *strictjson.Node, path string) Termination {
	typ, ok := c.Variant(n, path, "type", TerminationExit, TerminationSignal)
	if !ok {
		return Termination{}
	}
	t := Termination{Type: typ}
	if typ == TerminationExit {
		tm, _ := c.object(n, path, "type", "code")
		t.Code, _ = c.ReqInt(tm, path, "code", 0, 255)
		return t
	}
	tm, _ := c.object(n, path, "type", "signal")
	if v, ok := c.Required(tm, path, "signal"); ok {
		t.Signal, _ = c.signalEnum(v, path+".signal")
	}
	return t
}

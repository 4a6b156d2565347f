package compare

// The protocol dimension in behavior mode: per connection, in connection
// order (docs/formats/comparison.md).

// behaviorProtocol compares protocol_events per connection, in connection
// order (a connection's place is that of its first event), each
// connection's events index by index without sequence and at_ms; the
// replay_transitions follow as one ordered list without times. How two
// connections' events interleave is no difference; the order of events
// within a connection, and the order in which connections opened, are.
func behaviorProtocol(l, r *record) dimObs {
	lc := protocolConnections(l.timedList("protocol_events", "at_ms", skipTimes))
	rc := protocolConnections(r.timedList("protocol_events", "at_ms", skipTimes))
	lt := l.timedList("replay_transitions", "at_ms", skipTimes)
	rt := r.timedList("replay_transitions", "at_ms", skipTimes)
	d := dimObs{n: [2]int{len(lt), len(rt)}}
	for i := range max(len(lc), len(rc)) {
		var a, b []*obs
		if i < len(lc) {
			a = lc[i]
		}
		if i < len(rc) {
			b = rc[i]
		}
		d.n[0] += len(a)
		d.n[1] += len(b)
		for k := range max(len(a), len(b)) {
			var p obsPair
			if k < len(a) {
				p.l = a[k]
			}
			if k < len(b) {
				p.r = b[k]
			}
			d.pairs = append(d.pairs, p)
		}
	}
	t := zip(lt, rt)
	d.pairs = append(d.pairs, t.pairs...)
	return d
}

// protocolConnections splits protocol events (in sequence order) into the
// connections they belong to, in the order of each one's first event.
//
// A record does not name connections (docs/formats/capture-record.md), so
// they are recovered from what the loopback server records: an HTTP
// request opens an exchange, which its response (the first unanswered
// request of the same method and path) closes; every WebSocket event of
// one path belongs to one connection, so WebSocket connections on one
// path, even sequential ones, count as one. Exchanges of one kept-alive
// HTTP connection keep their order (each starts after the previous one's
// answer), and a WebSocket connection's events all share its path, so
// recovery can report a change where only the interleaving of two joined
// connections differs, never hide one in the order within a connection.
func protocolConnections(events []obs) [][]*obs {
	type route struct { // a method (empty for WebSocket) and a path
		method, path string
		hasPath      bool // a null path is not the empty one
	}
	var conns [][]*obs
	openHTTP := map[route][]int{} // connections awaiting their response, oldest first
	ws := map[route]int{}         // a WebSocket path's connection
	for i := range events {
		o := &events[i]
		m, _ := o.value.(map[string]any)
		protocol, _ := m["protocol"].(string)
		direction, _ := m["direction"].(string)
		method, _ := m["method"].(string)
		path, hasPath := m["path"].(string)
		key := route{method, path, hasPath}
		c := -1
		switch {
		case protocol == "websocket":
			key.method = ""
			if j, ok := ws[key]; ok {
				c = j
			} else {
				ws[key] = len(conns)
			}
		case direction == "response":
			switch q := openHTTP[key]; len(q) {
			case 0:
			case 1:
				c = q[0]
				delete(openHTTP, key)
			default:
				c, openHTTP[key] = q[0], q[1:]
			}
		default: // a request opens an exchange
			openHTTP[key] = append(openHTTP[key], len(conns))
		}
		if c < 0 {
			conns = append(conns, append(make([]*obs, 0, 2), o))
			continue
		}
		conns[c] = append(conns[c], o)
	}
	return conns
}

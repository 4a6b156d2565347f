package compare

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"
)

// randomRecord builds a random valid capture record.
func randomRecord(rng *rand.Rand) obj {
	r := baseRecord()
	at := 0
	next := func() int { at += rng.Intn(3); return at }
	words := []string{"a", "b", "foo\rbar", "ünï", "\x1b[1m", ""}
	pick := func() string { return words[rng.Intn(len(words))] }
	var frames, rend, inter, samples, shims, proto, trans arr
	machine := rng.Intn(2) == 0 // replay by a machine, else by static routes
	for range rng.Intn(30) {
		switch rng.Intn(7) {
		case 0:
			frames = append(frames, frame(len(frames), next(), pick()+"x"))
		case 1:
			rend = append(rend, rendered(len(rend), next(), pick()))
		case 2:
			t := next()
			inter = append(inter, interaction(len(inter), t, pick()))
		case 3:
			samples = append(samples, sample(next(), 100+rng.Intn(3), pick()))
		case 4:
			shims = append(shims, shimEvent(len(shims), next(), "git"))
		case 5:
			e := protocolEvent(len(proto), next(), "/"+pick())
			if machine { // under a machine, a request that moved nothing
				e["outcome"] = "unmatched"
			}
			proto = append(proto, e)
		case 6:
			if machine { // each transition is committed by a request
				at := next()
				proto = append(proto, committed(protocolEvent(len(proto), at, "/"+pick())))
				trans = append(trans, transition(len(trans), at, pick()))
			}
		}
	}
	r["frames"], r["rendered_frames"], r["interaction_events"] = nz(frames), nz(rend), nz(inter)
	r["process_samples"], r["shim_events"], r["protocol_events"], r["replay_transitions"] = nz(samples), nz(shims), nz(proto), nz(trans)
	cps := arr{checkpoint("before", 0)}
	for range rng.Intn(3) {
		cps = append(cps, checkpoint(fmt.Sprintf("c%d", len(cps)), next(), fileState("<filesystem-root-0>/f", pick())))
	}
	r["filesystem_checkpoints"] = append(cps, checkpoint("after_settlement", next()))
	if rng.Intn(2) == 0 {
		r["files_after"] = arr{fileState("<filesystem-root-0>/f", pick())}
	}
	if rng.Intn(4) == 0 {
		r["exit"] = obj{"code": nil, "signal": "SIGTERM", "reason": "timeout"}
	}
	if rng.Intn(6) == 0 {
		r["residual_unknowns"] = arr{obj{"scope": dimNames[rng.Intn(len(dimNames))], "reason": "sampled"}}
	}
	if rng.Intn(10) == 0 {
		r["truncated"] = true
	}
	return r
}

// replayConflict: one record holds machine transitions and the other
// static matched calls, so no one replay plan could have produced both.
func replayConflict(a, b obj) bool {
	has := func(r obj) (machine, static bool) {
		t, _ := r["replay_transitions"].(arr)
		events, _ := r["protocol_events"].(arr)
		for _, e := range events {
			static = static || e.(obj)["outcome"] == "matched"
		}
		return len(t) > 0, static
	}
	am, as := has(a)
	bm, bs := has(b)
	return (am && bs) || (bm && as)
}

func nz(a arr) arr {
	if a == nil {
		return arr{}
	}
	return a
}

func TestPropertyCaptureAgainstItselfIsUnchanged(t *testing.T) {
	for _, mode := range []Mode{ModeExact, ModeBehavior} {
		t.Run(string(mode), func(t *testing.T) { selfUnchanged(t, mode) })
	}
}

func selfUnchanged(t *testing.T, mode Mode) {
	rng := rand.New(rand.NewSource(1))
	for i := range 300 {
		rec := randomRecord(rng)
		e := env(t, rec)
		res := mustCompare(t, e, e, Options{Mode: mode})
		for _, v := range res.DimensionViews() {
			switch v.Status {
			case Added, Removed, Changed:
				t.Fatalf("case %d: %s is %s against itself", i, v.Name, v.Status)
			}
		}
		if res.FirstDivergence.Status == DivergenceFound {
			t.Fatalf("case %d: divergence against itself: %+v", i, res.FirstDivergence)
		}
		// Without truncation or residual unknowns, exactly unchanged.
		if rec["truncated"] == false && len(rec["residual_unknowns"].(arr)) == 0 {
			if res.Status != Unchanged || res.FirstDivergence.Status != DivergenceNone {
				t.Fatalf("case %d: %s / %+v", i, res.Status, res.FirstDivergence)
			}
		}
	}
}

func TestPropertySwappingSidesSwapsAddedAndRemoved(t *testing.T) {
	for _, mode := range []Mode{ModeExact, ModeBehavior} {
		t.Run(string(mode), func(t *testing.T) { swapSwaps(t, mode) })
	}
}

func swapSwaps(t *testing.T, mode Mode) {
	rng := rand.New(rand.NewSource(2))
	mirror := map[Status]Status{Added: Removed, Removed: Added}
	for i := range 300 {
		a, b := randomRecord(rng), randomRecord(rng)
		for replayConflict(a, b) { // two runs of one scenario replay the same way
			b = randomRecord(rng)
		}
		if rng.Intn(2) == 0 { // often compare near neighbours, not just strangers
			b = clone(a)
			mutate(rng, b)
		}
		ea, eb := envPair(t, a, b)
		ab := mustCompare(t, ea, eb, Options{Mode: mode, DiffLimit: 1000})
		ba := mustCompare(t, eb, ea, Options{Mode: mode, DiffLimit: 1000})
		for d := range ab.Diffs {
			x, y := ab.Diffs[d], ba.Diffs[d]
			if x.Total != y.Total || x.LeftCount != y.RightCount || len(x.Items) != len(y.Items) {
				t.Fatalf("case %d: %s diffs %d/%d vs %d/%d", i, x.Dimension, x.Total, len(x.Items), y.Total, len(y.Items))
			}
			for k := range x.Items {
				if !reflect.DeepEqual(x.Items[k].Left, y.Items[k].Right) || !reflect.DeepEqual(x.Items[k].Right, y.Items[k].Left) {
					t.Fatalf("case %d: %s item %d not swapped: %+v vs %+v", i, x.Dimension, k, x.Items[k], y.Items[k])
				}
			}
		}
		if ab.Status != ba.Status {
			t.Fatalf("case %d: status %s vs %s", i, ab.Status, ba.Status)
		}
		va, vb := ab.DimensionViews(), ba.DimensionViews()
		for d := range va {
			want := va[d].Status
			if m, ok := mirror[want]; ok {
				want = m
			}
			if vb[d].Status != want {
				t.Fatalf("case %d: %s is %s one way and %s the other", i, va[d].Name, va[d].Status, vb[d].Status)
			}
		}
		fa, fb := ab.FirstDivergence, ba.FirstDivergence
		if fa.Status != fb.Status || fa.Dimension != fb.Dimension || fa.Index != fb.Index || fa.Reason != fb.Reason {
			t.Fatalf("case %d: divergence %+v vs %+v", i, fa, fb)
		}
		if !reflect.DeepEqual(fa.Left, fb.Right) || !reflect.DeepEqual(fa.Right, fb.Left) ||
			!reflect.DeepEqual(fa.LeftAtMS, fb.RightAtMS) || fa.LeftLocation != fb.RightLocation {
			t.Fatalf("case %d: sides not swapped: %+v vs %+v", i, fa, fb)
		}
	}
}

// mutate changes one random thing in a valid record, keeping it valid.
func mutate(rng *rand.Rand, r obj) {
	lists := []string{"frames", "rendered_frames", "interaction_events", "process_samples", "shim_events", "protocol_events", "replay_transitions"}
	name := lists[rng.Intn(len(lists))]
	items := r[name].(arr)
	switch rng.Intn(4) {
	case 0:
		r[name] = arr{}
		if name == "protocol_events" || name == "replay_transitions" { // transitions are committed by events
			r["protocol_events"], r["replay_transitions"] = arr{}, arr{}
		}
	case 1:
		if len(items) > 0 {
			o := items[len(items)-1].(obj)
			keys := []string{"data", "command", "path", "transition_id", "serialized_state"}
			if name == "protocol_events" { // a request's data is only ever the placeholder
				keys = keys[2:]
			}
			for _, k := range keys {
				if _, ok := o[k]; ok {
					o[k] = "mutated"
					break
				}
			}
		}
	case 2:
		r["exit"] = obj{"code": 3, "signal": nil, "reason": "exited"}
	case 3:
		r["files_after"] = arr{}
	}
}

package compare

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// chunked is a record whose raw stream is stream cut at cuts, one
// rendered frame after each chunk; screen gives the rendered lines after
// the first n bytes.
func chunked(stream string, cuts []int, screen func(n int) []string) obj {
	r := baseRecord()
	var frames, rend arr
	prev := 0
	for i, c := range append(cuts, len(stream)) {
		frames = append(frames, frame(i, i*7, stream[prev:c]))
		lines := screen(c)
		ro := rendered(i, i*7, lines[0])
		ro["rows"], ro["lines"] = len(lines), anyStrings(lines)
		rend = append(rend, ro)
		prev = c
	}
	r["frames"], r["rendered_frames"] = frames, rend
	return r
}

// progressScreen renders a progress script's output the way a terminal
// would for this test: each line's last carriage-return segment.
func progressScreen(stream string) func(n int) []string {
	return func(n int) []string {
		lines := strings.Split(stream[:n], "\r\n")
		out := make([]string, 4)
		for i, l := range lines {
			if i < len(out) {
				segs := strings.Split(l, "\r")
				out[i] = segs[len(segs)-1]
			}
		}
		for i := range out {
			out[i] += strings.Repeat(" ", 30-len([]rune(out[i])))
		}
		return out
	}
}

const (
	progressOK   = "\x1b[1mbuild\x1b[0m\r\n⠋ 10%\r⠙ 50%\r⠹ 100%\r\n✔ build succeeded\r\n"
	progressFail = "\x1b[1mbuild\x1b[0m\r\n⠋ 10%\r⠙ 50%\r⠹ 100%\r\n✘ build failed\r\n"
)

// randomCuts splits s at random rune boundaries (a capture's chunks are
// JSON strings, so never split inside a character).
func randomCuts(rng *rand.Rand, s string) []int {
	var cuts []int
	for at := 0; ; {
		at += 1 + rng.Intn(8)
		for at < len(s) && !utf8.RuneStart(s[at]) {
			at++
		}
		if at >= len(s) {
			return cuts
		}
		cuts = append(cuts, at)
	}
}

// Re-chunking one byte stream never changes the behavior terminal
// verdict; exact mode sees the different chunks.
func TestPropertyRechunkingKeepsBehaviorTerminal(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for i := range 200 {
		a := chunked(progressOK, randomCuts(rng, progressOK), progressScreen(progressOK))
		b := chunked(progressOK, randomCuts(rng, progressOK), progressScreen(progressOK))
		ea, eb := env(t, a), env(t, b)
		res := mustCompare(t, ea, eb, Options{})
		if res.Mode != ModeBehavior || res.Terminal != Unchanged || res.Status != Unchanged || res.FirstDivergence.Status != DivergenceNone {
			t.Fatalf("case %d: %s terminal %s, %+v", i, res.Status, res.Terminal, res.FirstDivergence)
		}
		if ex := mustCompare(t, ea, eb, Options{Mode: ModeExact}); ex.Terminal != Changed && len(a["frames"].(arr)) != len(b["frames"].(arr)) {
			t.Fatalf("case %d: exact terminal %s for different chunks", i, ex.Terminal)
		}
	}
}

// A one-line change is found at its byte and shown as the differing row,
// with the differing characters, whatever the chunking.
func TestBehaviorOneLineChangeIsLocated(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	at := strings.Index(progressOK, "✔") + 2 // ✔ and ✘ share their first two bytes
	for i := range 50 {
		a := chunked(progressOK, randomCuts(rng, progressOK), progressScreen(progressOK))
		b := chunked(progressFail, randomCuts(rng, progressFail), progressScreen(progressFail))
		res := mustCompare(t, env(t, a), env(t, b), Options{DiffLimit: 100})
		wantStatuses(t, res, Changed, map[string]Status{"terminal": Changed})
		fd := res.FirstDivergence
		if fd.Status != DivergenceFound || fd.Dimension != "terminal" || fd.Index != 0 {
			t.Fatalf("case %d: divergence %+v", i, fd)
		}
		l, r := fd.Left.(map[string]any), fd.Right.(map[string]any)
		if l["offset"] != jsonInt(at) || r["offset"] != jsonInt(at) {
			t.Fatalf("case %d: offsets %v %v, want %d", i, l["offset"], r["offset"], at)
		}
		// The screen after the chunk holding the byte: row 2 differs, unless the
		// chunk ended before the row's differing text.
		lrows, rrows := l["rows"].([]any), r["rows"].([]any)
		if len(lrows) != len(rrows) || len(lrows) > 1 {
			t.Fatalf("case %d: rows %v / %v", i, lrows, rrows)
		}
		if len(lrows) == 1 {
			lr, rr := lrows[0].(map[string]any), rrows[0].(map[string]any)
			if lr["row"] != jsonInt(2) || !strings.HasPrefix("✔ build succeeded", lr["text"].(string)) || !strings.HasPrefix("✘ build failed", rr["text"].(string)) {
				t.Fatalf("case %d: row %v / %v", i, lr, rr)
			}
		}
		// The final screen's row 2 is listed with its character ranges.
		dd := res.Diffs[dimTerminal]
		if dd.Total != 2 {
			t.Fatalf("case %d: terminal diffs %+v", i, dd)
		}
		fl, fr := dd.Items[1].Left.(map[string]any), dd.Items[1].Right.(map[string]any)
		if fl["text"] != "✔ build succeeded" || fr["text"] != "✘ build failed" || *dd.Items[1].LeftLocation != "$.normalized_result.rendered_frames["+itoa(len(a["rendered_frames"].(arr))-1)+"].lines[2]" {
			t.Fatalf("case %d: final row %v / %v at %s", i, fl, fr, *dd.Items[1].LeftLocation)
		}
		if got := rangesOf(fl); got != "[[0,1],[8,15]]" {
			t.Errorf("case %d: left ranges %s", i, got)
		}
		if got := rangesOf(fr); got != "[[0,1],[8,12]]" {
			t.Errorf("case %d: right ranges %s", i, got)
		}
	}
}

func rangesOf(m map[string]any) string { b, _ := json.Marshal(m["ranges"]); return string(b) }

// Times, sample counts and checkpoint times do not matter in behavior
// mode; exact mode keeps seeing them.
func TestBehaviorIgnoresTimesAndSampleCounts(t *testing.T) {
	a := baseRecord()
	a["process_samples"] = arr{sample(0, 1, "sh -c run"), obj{"at_ms": 10, "pid": 2, "parent_pid": 1, "command": "sh -c run", "process_group_id": 1, "session_id": 1},
		obj{"at_ms": 60, "pid": 2, "parent_pid": 1, "command": "sleep 1", "process_group_id": 1, "session_id": 1}}
	b := baseRecord()
	b["frames"], b["rendered_frames"] = arr{frame(0, 9, "hello")}, arr{rendered(0, 9, "hello")}
	b["interaction_events"] = arr{interaction(0, 31, "x\r")}
	b["settlement"] = obj{"state": "quiesced", "elapsed_ms": 180, "cleanup_outcome": "not_required"}
	b["filesystem_checkpoints"] = arr{checkpoint("before", 0), checkpoint("after_settlement", 260)}
	// pids discovered in another order, the child sampled three times.
	b["process_samples"] = arr{sample(0, 5, "sh -c run"),
		obj{"at_ms": 50, "pid": 3, "parent_pid": 5, "command": "sleep 1", "process_group_id": 5, "session_id": 5},
		obj{"at_ms": 100, "pid": 3, "parent_pid": 5, "command": "sleep 1", "process_group_id": 5, "session_id": 5},
		sample(100, 5, "sh -c run")}
	ea, eb := env(t, a), env(t, b)
	res := mustCompare(t, ea, eb, Options{Mode: ModeBehavior})
	wantStatuses(t, res, Unchanged, nil)
	ex := mustCompare(t, ea, eb, Options{Mode: ModeExact})
	wantStatuses(t, ex, Changed, map[string]Status{"terminal": Changed, "interaction": Changed, "exit": Changed, "filesystem": Changed, "process": Changed})

	// A process seen in one run only is a difference.
	c := clone(b)
	c["process_samples"] = append(c["process_samples"].(arr), obj{"at_ms": 150, "pid": 7, "parent_pid": 3, "command": "curl x", "process_group_id": 5, "session_id": 5})
	res = mustCompare(t, ea, env(t, c), Options{DiffLimit: 10})
	wantStatuses(t, res, Changed, map[string]Status{"process": Changed})
	fd := res.FirstDivergence
	if fd.Dimension != "process" || fd.Left != nil || fd.RightLocation != "$.normalized_result.process_samples[4]" {
		t.Fatalf("divergence %+v", fd)
	}
	if got, _ := json.Marshal(fd.Right); string(got) != `{"command":"curl x","parent_commands":["sh -c run","sleep 1"]}` {
		t.Errorf("process node %s", got)
	}
}

// Checkpoints are matched by name; an extra one is the difference, not
// every checkpoint after it.
func TestBehaviorCheckpointsByName(t *testing.T) {
	a := baseRecord()
	b := baseRecord()
	b["filesystem_checkpoints"] = arr{checkpoint("before", 0), checkpoint("built", 50, fileState("<filesystem-root-0>/out", "ab")), checkpoint("after_settlement", 300)}
	res := mustCompare(t, env(t, a), env(t, b), Options{DiffLimit: 10})
	wantStatuses(t, res, Changed, map[string]Status{"filesystem": Changed})
	if dd := res.Diffs[dimFilesystem]; dd.Total != 1 || dd.Items[0].Left != nil || *dd.Items[0].RightLocation != "$.normalized_result.filesystem_checkpoints[1]" {
		t.Fatalf("filesystem diffs %+v", dd)
	}
}

func TestModeArgument(t *testing.T) {
	e := env(t, baseRecord())
	_, err := Compare(e, e, Options{Mode: "fuzzy"})
	if ce := wantError(t, err, CodeInvalidRequest); !hasIssue(ce, "", "$.mode", "invalid_value") {
		t.Errorf("issues %+v", ce.Issues)
	}
	for _, m := range []Mode{"", ModeBehavior, ModeExact} {
		res := mustCompare(t, e, e, Options{Mode: m})
		out, err := Envelope(res, e, e)
		if err != nil {
			t.Fatal(err)
		}
		want := m
		if m == "" {
			want = ModeBehavior
		}
		var p struct {
			Mode Mode `json:"mode"`
		}
		var nr struct {
			Mode Mode `json:"mode"`
		}
		json.Unmarshal(out.Parameters, &p)
		json.Unmarshal(out.NormalizedResult, &nr)
		if p.Mode != want || nr.Mode != want {
			t.Errorf("mode %q: parameters %s, result mode %q", m, out.Parameters, nr.Mode)
		}
	}
}

// Paging: every differing item is reachable, none silently cut.
func TestDiffPaging(t *testing.T) {
	a, b := baseRecord(), baseRecord()
	var la, lb arr
	for i := range 1500 {
		la = append(la, interaction(i, 20+i, "x\r"))
		lb = append(lb, interaction(i, 20+i, "y\r"))
	}
	a["interaction_events"], b["interaction_events"] = la, lb
	ea, eb := env(t, a), env(t, b)
	seen := 0
	for off := 0; ; off += 400 {
		res := mustCompare(t, ea, eb, Options{DiffLimit: 400, DiffOffset: off})
		dd := res.Diffs[dimInteraction]
		if dd.Total != 1500 || dd.Offset != off {
			t.Fatalf("page %d: %+v", off, dd.Total)
		}
		if len(dd.Items) == 0 {
			break
		}
		if dd.Items[0].Index != off {
			t.Fatalf("page %d starts at %d", off, dd.Items[0].Index)
		}
		seen += len(dd.Items)
	}
	if seen != 1500 {
		t.Errorf("paged through %d of 1500", seen)
	}
}

func TestCharRanges(t *testing.T) {
	for _, c := range []struct{ a, b, l, r string }{
		{"abc", "abc", "[]", "[]"},
		{"50%", "55%", "[[1,2]]", "[[1,2]]"},
		{"", "xyz", "[]", "[[0,3]]"},
		{"✔ ok", "✘ ok", "[[0,1]]", "[[0,1]]"},
	} {
		l, r := charRanges(c.a, c.b)
		lj, _ := json.Marshal(l)
		rj, _ := json.Marshal(r)
		if string(lj) != c.l || string(rj) != c.r {
			t.Errorf("%q/%q: %s %s", c.a, c.b, lj, rj)
		}
	}
}

// FuzzBehaviorTerminal: for any two streams, each cut into chunks at
// fuzzed rune boundaries, the behavior terminal verdict is unchanged
// exactly when the streams are equal, never depends on the chunking, and
// swapping the sides swaps the divergence's sides.
func FuzzBehaviorTerminal(f *testing.F) {
	f.Add(progressOK, progressFail, []byte{3, 9, 1})
	f.Add("a\rb", "a\rb", []byte{1})
	f.Add("\x1b[?1049hx", "\x1b[?1049hy", []byte{})
	f.Fuzz(func(t *testing.T, a, b string, cutSeed []byte) {
		if len(a) > 2000 || len(b) > 2000 || !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		cuts := func(s string) []int {
			var out []int
			at := 0
			for _, c := range cutSeed {
				at += int(c)%7 + 1
				for at < len(s) && !utf8.RuneStart(s[at]) {
					at++
				}
				if at >= len(s) {
					break
				}
				out = append(out, at)
			}
			return out
		}
		screen := func(s string) func(int) []string {
			return func(n int) []string {
				return []string{strings.ToValidUTF8(strings.Map(func(r rune) rune {
					if r < 0x20 {
						return '.'
					}
					return r
				}, s[:n]), "?")}
			}
		}
		ra, rb := chunked(a, cuts(a), screen(a)), chunked(b, nil, screen(b))
		ea, eb := env(t, ra), env(t, rb)
		ab := mustCompare(t, ea, eb, Options{DiffLimit: 10})
		ba := mustCompare(t, eb, ea, Options{DiffLimit: 10})
		if (ab.Terminal == Unchanged) != (a == b) && a != "" && b != "" {
			t.Fatalf("terminal %s for %q / %q", ab.Terminal, a, b)
		}
		if ab.Terminal != ba.Terminal && !(ab.Terminal == Added && ba.Terminal == Removed) && !(ab.Terminal == Removed && ba.Terminal == Added) {
			t.Fatalf("terminal %s one way, %s the other", ab.Terminal, ba.Terminal)
		}
		if fa, fb := ab.FirstDivergence, ba.FirstDivergence; fa.Dimension == "terminal" && (fmtJSON(fa.Left) != fmtJSON(fb.Right) || fmtJSON(fa.Right) != fmtJSON(fb.Left)) {
			t.Fatalf("sides not swapped: %s / %s", fmtJSON(fa), fmtJSON(fb))
		}
		again := mustCompare(t, env(t, chunked(a, nil, screen(a))), eb, Options{})
		if again.Terminal != ab.Terminal {
			t.Fatalf("re-chunking changed the verdict: %s vs %s", again.Terminal, ab.Terminal)
		}
	})
}

// A 1,000-row final screen whose every long row differs: every row is
// listed (none cut), each with its ranges; past the character-range
// budget a row's ranges fall back to its common prefix and suffix.
func TestBehaviorHugeScreenDiffIsBoundedAndComplete(t *testing.T) {
	row := func(c string, i int) string { return fmt.Sprintf("%04d ", i) + strings.Repeat(c, 495) }
	mk := func(c string) obj {
		r := baseRecord()
		lines := make([]string, 1000)
		for i := range lines {
			lines[i] = row(c, i)
		}
		ro := rendered(0, 5, lines[0])
		ro["rows"], ro["lines"], ro["columns"] = 1000, anyStrings(lines), 500
		r["frames"], r["rendered_frames"] = arr{frame(0, 5, c)}, arr{ro}
		return r
	}
	res := mustCompare(t, env(t, mk("x")), env(t, mk("y")), Options{DiffLimit: 5000})
	dd := res.Diffs[dimTerminal]
	if dd.Total != 1001 || len(dd.Items) != 1001 { // the stream, then 1,000 rows
		t.Fatalf("total %d items %d", dd.Total, len(dd.Items))
	}
	last := dd.Items[1000].Left.(map[string]any)
	if last["row"] != jsonInt(999) || rangesOf(last) != "[[5,500]]" {
		t.Errorf("last row %v ranges %s", last["row"], rangesOf(last))
	}
}

// Differing fields are named under the mode: behavior leaves times out.
func TestDifferingFieldsFollowTheMode(t *testing.T) {
	a, b := baseRecord(), baseRecord()
	b["interaction_events"] = arr{interaction(0, 35, "y\r")}
	ea, eb := env(t, a), env(t, b)
	for mode, want := range map[Mode]string{ModeBehavior: `["data"]`, ModeExact: `["data","dispatched_at_ms","scheduled_at_ms"]`} {
		res := mustCompare(t, ea, eb, Options{Mode: mode, DiffLimit: 10})
		if got := fmtJSON(res.Diffs[dimInteraction].Items[0].DifferingFields); got != want {
			t.Errorf("%s: diff fields %s, want %s", mode, got, want)
		}
		if got := fmtJSON(res.DivergenceFields); res.FirstDivergence.Dimension != "interaction" || got != want {
			t.Errorf("%s: divergence %s fields %s", mode, res.FirstDivergence.Dimension, got)
		}
	}
}

package capture

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse/gatehouse/backend/proctree"
)

// FuzzRecordedFramesRender feeds the recorder fuzzed output in fuzzed
// chunks, with a secret alias, a temporary root, a known pid, a pattern
// and a resize among them, and checks what TestCapturedNormalizedFramesMatchXterm
// checks on a real capture, for any bytes: every rendered frame is the
// screen a second renderer shows after the recorded raw frames and resizes
// up to it (unless the record lists the composed-secret exception, from
// the frame it names), and neither a raw frame (what the renderer is
// given) nor a rendered frame holds the secret.
func FuzzRecordedFramesRender(f *testing.F) {
	const root = "/tmp/fuzz-root-0123"
	for _, seed := range []struct {
		data   string
		secret string
	}{
		{"ab Zqsecret-1 cd " + root + "/x 4242 tok-77\r\n", "secret-1"},
		{"\x1b[31mZqsec\x1b[0mret-1 Zqsecr", "secret-1"},
		{"     et\rZqs" + root[:9], "et"},
		{"\x1b[?1049h" + root + root + root + "\x1b[?1049l", "abcdef"},
	} {
		f.Add([]byte(seed.data), seed.secret, uint8(7), uint8(13), uint8(3))
	}
	node := testNode(f)
	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { sup.Close() })
	h := RendererHelper{Node: node, Supervisor: sup}
	var recScr, replay *screen // kept across inputs, reset for each
	f.Cleanup(func() {
		for _, s := range []*screen{recScr, replay} {
			if s != nil {
				s.close()
			}
		}
	})
	fresh := func(t *testing.T, s **screen, term Terminal) {
		if *s != nil && (*s).err != nil {
			(*s).close()
			*s = nil
		}
		if *s == nil {
			var err error
			if *s, err = startScreen(h, term); err != nil {
				t.Fatal(err)
			}
		}
		if err := (*s).reset(term); err != nil {
			t.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, secretTail string, seed, cols, resizeAt uint8) {
		// the secret starts with "Zq", so it is no part of a placeholder
		secret := "Zq" + strings.Map(func(r rune) rune {
			if r < 0x21 || r > 0x7e {
				return -1
			}
			return r
		}, secretTail)
		if len(secret) > 40 || len(data) > 4000 {
			return
		}
		term := Terminal{Columns: 2 + int(cols)%30, Rows: 4, Scrollback: 20}
		sc := parseOK(t, mustJSON(t, obj{"approved": true, "executable": "/bin/sh", "working_directory": "/",
			"environment": obj{"S": secret}, "secret_aliases": []any{"S"},
			"terminal":      obj{"columns": term.Columns, "rows": term.Rows, "scrollback": term.Scrollback},
			"normalization": obj{"patterns": []any{obj{"pattern": `tok-[0-9]+`, "replacement": "<tok>"}}}}))
		norm, err := newNormalizer(sc, root)
		if err != nil {
			t.Fatal(err)
		}
		norm.addPID(4242)
		fresh(t, &recScr, term)
		fresh(t, &replay, term)
		rec := &Record{}
		r := &recorder{rec: rec, limits: sc.Limits, norm: norm, text: stream{literals: norm.literals}, scr: recScr}
		done := make(chan struct{})
		go func() {
			defer close(done)
			parts := splitParts(data, int(seed))
			for i, p := range parts {
				if i == int(resizeAt)%(len(parts)+1) {
					r.interaction(Event{Type: EventResize, Columns: term.Columns + 3, Rows: term.Rows + 1}, 0, OutcomeDispatched)
				}
				r.chunk(p, time.Duration(i)*time.Millisecond)
			}
			r.flush(time.Second)
			r.awaitFrames()
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("recording %q did not finish in 30 s", data)
		}
		if r.screenErr != nil {
			if !strings.Contains(r.screenErr.Error(), "xterm.js failed: ") {
				t.Fatal(r.screenErr)
			}
			return // xterm.js itself threw on the stream
		}
		exception := len(rec.RenderedFrames)
		for _, l := range rec.Limitations {
			var n int
			if _, err := fmt.Sscanf(l, "rendered frames: from rendered frame %d on", &n); err == nil {
				exception = n
			}
		}
		for _, fr := range rec.Frames {
			if strings.Contains(fr.Data, secret) {
				t.Fatalf("raw frame %d holds the secret: %q", fr.Sequence, fr.Data)
			}
		}
		for _, fr := range rec.RenderedFrames {
			if slices.ContainsFunc(append(fr.Lines, fr.SerializedState), func(l string) bool { return strings.Contains(l, secret) }) {
				t.Fatalf("rendered frame %d shows the secret: %q", fr.Sequence, fr.Lines)
			}
		}
		// replay the record as the viewer does: raw frames and resizes in
		// capture order, a screen after each
		next := 0
		for _, e := range rec.EventJournal {
			if next >= exception {
				break
			}
			switch e.Collection {
			case "frames":
				replay.writeString(rec.Frames[e.Index].Data)
			case "interaction_events":
				ev := rec.InteractionEvents[e.Index]
				var c, rows int
				fmt.Sscanf(ev.Data, "%dx%d", &c, &rows) //nolint:errcheck // the recorder wrote it
				replay.resize(c, rows)
			default:
				continue
			}
			got, err := replay.snapshot()
			if err != nil {
				t.Fatalf("replay: %v", err)
			}
			want := rec.RenderedFrames[next]
			if d := frameView(got).diff(frameView(want)); len(d) > 0 || got.SerializedState != want.SerializedState {
				t.Fatalf("rendered frame %d is not the screen of the raw frames up to it (%q):\n  %s", next, data, strings.Join(d, "\n  "))
			}
			next++
		}
	})
}

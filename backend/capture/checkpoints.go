package capture

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gatehouse/gatehouse/backend/capture/record"
)

// Reserved checkpoint names: the first and the last checkpoint of every
// capture.
const (
	CheckpointBefore          = record.CheckpointBefore
	CheckpointAfterSettlement = record.CheckpointAfterSettlement
)

// checkpoints takes the filesystem checkpoints of one capture and fires
// the scenario's checkpoint triggers. It is used by the recording
// goroutine only (through the recorder).
//
// What is recorded (docs/formats/capture-record.md, "filesystem_checkpoints"):
//   - "before" is taken before launch and "after_settlement" after
//     settlement; the scenario's checkpoints come between them in the order
//     taken. A checkpoint whose trigger never occurred before settlement is
//     not recorded; a limitation names it.
//   - files lists every entry of every filesystem root (see takeSnapshot),
//     ordered by root then path, with paths "<filesystem-root-N>/rel"
//     (secret values in names redacted), mode as the stat(2) permission,
//     setuid, setgid and sticky bits, size in bytes for files (the bytes
//     hashed) and symlinks (the target's length) and 0 otherwise, sha256
//     for files only (null once limits.file_bytes is spent) and the
//     normalized target of symlinks.
//   - effects are relative to the previous checkpoint ("before" has none)
//     and list only created, deleted and modified entries: unchanged
//     entries are omitted. Changes are found on raw values, so
//     normalization never invents or hides one.
//   - files_before and files_after are the files of "before" and
//     "after_settlement"; filesystem_effects is the net effect between
//     those two (transient files show only in the checkpoints between).
//
// Triggers: time (at_ms after launch, also during settlement),
// terminal_literal (the occurrence-th non-overlapping
// occurrence of value in the raw output stream after secret and
// sensitive-input redaction, counted across chunk boundaries, up to the
// output limits), root_exit (right after the root's exit is recorded) and
// settled (right after settlement is recorded). Several checkpoints due at
// once are taken in scenario order (time triggers by at_ms first).
type checkpoints struct {
	ctx    context.Context
	roots  []string
	limits Limits
	norm   *normalizer
	redact *strings.Replacer // secret values and sensitive input only
	start  time.Time

	pending []*pendingCheckpoint // scenario order
	timer   *time.Timer          // next time trigger; nil without any
	closed  bool                 // after_settlement is recorded

	before *snapshot // taken before launch
	first  *snapshot // of the "before" checkpoint
	prev   *snapshot // of the last checkpoint recorded
	lastAt int       // at_ms of the last checkpoint recorded

	unreadable map[string]bool // limitation texts already recorded
}

// pendingCheckpoint is a scenario checkpoint not yet taken.
type pendingCheckpoint struct {
	Checkpoint
	taken bool
	count int    // terminal_literal occurrences seen so far
	tail  string // end of the stream that may still begin an occurrence
}

// newCheckpoints prepares the checkpoints of sc over roots (the resolved
// filesystem roots, in the scenario's order). ctx bounds every walk.
func newCheckpoints(ctx context.Context, sc *Scenario, roots []string, norm *normalizer) *checkpoints {
	c := &checkpoints{ctx: ctx, roots: roots, limits: sc.Limits, norm: norm,
		redact: secretReplacer(sc), unreadable: map[string]bool{}}
	for _, cp := range sc.Checkpoints {
		c.pending = append(c.pending, &pendingCheckpoint{Checkpoint: cp})
		if cp.Trigger.Type == TriggerTime && c.timer == nil {
			c.timer = time.NewTimer(time.Hour)
			c.timer.Stop()
		}
	}
	return c
}

// secretReplacer replaces secret alias values and sensitive input (as the
// normalizer does) with RedactedSecret, longest first.
func secretReplacer(sc *Scenario) *strings.Replacer {
	secrets := secretValues(sc)
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, RedactedSecret)
	}
	return strings.NewReplacer(pairs...)
}

// takeBefore snapshots the roots for the "before" checkpoint; call it
// before launch.
func (c *checkpoints) takeBefore() { c.before = takeSnapshot(c.ctx, c.roots, c.limits) }

// launched starts the clock of time triggers.
func (c *checkpoints) launched(start time.Time) {
	c.start = start
	c.arm()
}

// timerC is the channel of the next time trigger (nil when there is none,
// so a select never takes it).
func (c *checkpoints) timerC() <-chan time.Time {
	if c == nil || c.timer == nil || c.closed {
		return nil
	}
	return c.timer.C
}

// arm sets the timer for the earliest pending time trigger.
func (c *checkpoints) arm() {
	if c.timer == nil {
		return
	}
	next := -1
	for _, p := range c.pending {
		if !p.taken && p.Trigger.Type == TriggerTime && (next < 0 || p.Trigger.AtMS < next) {
			next = p.Trigger.AtMS
		}
	}
	if next < 0 || c.closed {
		c.timer.Stop()
		return
	}
	c.timer.Reset(time.Until(c.start.Add(time.Duration(next) * time.Millisecond)))
}

// dueCheckpoints takes every time checkpoint due by now (since launch).
func (r *recorder) dueCheckpoints() {
	c := r.fs
	if c == nil || c.closed {
		return
	}
	now := time.Since(c.start)
	var due []*pendingCheckpoint
	for _, p := range c.pending {
		if !p.taken && p.Trigger.Type == TriggerTime && time.Duration(p.Trigger.AtMS)*time.Millisecond <= now {
			due = append(due, p)
		}
	}
	sort.SliceStable(due, func(i, j int) bool { return due[i].Trigger.AtMS < due[j].Trigger.AtMS })
	r.take(due)
	c.arm()
}

// literalCheckpoints counts terminal_literal occurrences in text, the next
// piece of the raw output stream, and takes the checkpoints it completes.
func (r *recorder) literalCheckpoints(text string) {
	c := r.fs
	if c == nil || c.closed || text == "" {
		return
	}
	var fired []*pendingCheckpoint
	redacted := ""
	for _, p := range c.pending {
		if p.taken || p.Trigger.Type != TriggerTerminalLiteral {
			continue
		}
		if redacted == "" {
			redacted = c.redact.Replace(text)
		}
		if p.feed(redacted) {
			fired = append(fired, p)
		}
	}
	r.take(fired)
}

// feed counts non-overlapping occurrences of the literal across pieces of
// the stream; it reports whether the wanted occurrence has been reached.
func (p *pendingCheckpoint) feed(text string) bool {
	v := p.Trigger.Value
	s := p.tail + text
	for p.count < p.Trigger.Occurrence {
		i := strings.Index(s, v)
		if i < 0 {
			break
		}
		p.count++
		s = s[i+len(v):]
	}
	if keep := len(v) - 1; len(s) > keep {
		s = s[len(s)-keep:]
	}
	p.tail = s
	return p.count >= p.Trigger.Occurrence
}

// eventCheckpoints takes the checkpoints triggered by root_exit or settled.
func (r *recorder) eventCheckpoints(trigger string) {
	c := r.fs
	if c == nil || c.closed {
		return
	}
	var due []*pendingCheckpoint
	for _, p := range c.pending {
		if !p.taken && p.Trigger.Type == trigger {
			due = append(due, p)
		}
	}
	r.take(due)
}

// take snapshots and records each checkpoint of due, in order.
func (r *recorder) take(due []*pendingCheckpoint) {
	for _, p := range due {
		p.taken = true
		r.checkpoint(p.Name, time.Since(r.fs.start))
	}
}

// checkpoint records checkpoint name taken at (since launch): "before"
// uses the snapshot taken before launch; every other name walks the roots
// now. Recording "after_settlement" completes the checkpoints: it sets
// files_before, files_after and filesystem_effects, names the checkpoints
// that were never taken, and no checkpoint is taken after it.
func (r *recorder) checkpoint(name string, at time.Duration) {
	r.awaitFrames() // the screen of the output before it is recorded first
	c := r.fs
	if c == nil { // a recorder without filesystem checkpoints
		r.rec.FilesystemCheckpoints = append(r.rec.FilesystemCheckpoints, FilesystemCheckpoint{
			Name: name, AtMS: r.norm.ms(ms(at)), Files: []FileState{}, Effects: []FileEffect{},
		})
		r.journal("filesystem_checkpoints", len(r.rec.FilesystemCheckpoints)-1)
		return
	}
	if c.closed {
		return
	}
	snap := c.before
	if name != CheckpointBefore || snap == nil {
		snap = takeSnapshot(c.ctx, c.roots, c.limits)
	}
	atMS := max(r.norm.ms(ms(at)), c.lastAt)
	c.lastAt = atMS
	cp := FilesystemCheckpoint{Name: name, AtMS: atMS, Files: c.files(snap), Effects: []FileEffect{}, Truncated: snap.truncated()}
	if c.prev != nil {
		cp.Effects = c.effects(diff(c.prev, snap))
	}
	r.rec.FilesystemCheckpoints = append(r.rec.FilesystemCheckpoints, cp)
	r.journal("filesystem_checkpoints", len(r.rec.FilesystemCheckpoints)-1)
	for _, limit := range snap.exceeded {
		r.truncate(c.limitText(name, limit))
	}
	for _, u := range snap.unreadable {
		text := fmt.Sprintf("filesystem checkpoints: could not read %s", c.norm.text(u))
		if c.unreadable[text] {
			continue
		}
		if len(c.unreadable) == 0 {
			r.rec.ResidualUnknowns = append(r.rec.ResidualUnknowns, ResidualUnknown{Scope: "filesystem", Reason: "some filesystem entries could not be read; their state is unknown"})
		}
		c.unreadable[text] = true
		r.rec.Limitations = append(r.rec.Limitations, text)
	}
	c.prev = snap
	switch name {
	case CheckpointBefore:
		c.first = snap
		r.rec.FilesBefore = cp.Files
	case CheckpointAfterSettlement:
		r.rec.FilesAfter = cp.Files
		if c.first != nil {
			r.rec.FilesystemEffects = c.effects(diff(c.first, snap))
		}
		c.close(r)
	}
}

// close ends the checkpoints and names those never taken.
func (c *checkpoints) close(r *recorder) {
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
	}
	for _, p := range c.pending {
		if p.taken {
			continue
		}
		var why string
		switch p.Trigger.Type {
		case TriggerTime:
			why = fmt.Sprintf("its time trigger (%d ms) was not reached before settlement", p.Trigger.AtMS)
		case TriggerTerminalLiteral:
			why = fmt.Sprintf("its terminal_literal trigger saw %d of %d occurrences before settlement", p.count, p.Trigger.Occurrence)
		case TriggerRootExit:
			why = "the root process's exit could not be observed"
		default:
			why = fmt.Sprintf("its %s trigger did not occur", p.Trigger.Type)
		}
		r.rec.Limitations = append(r.rec.Limitations, fmt.Sprintf("checkpoint %q was not taken: %s", p.Name, why))
	}
}

func (c *checkpoints) limitText(name, limit string) string {
	switch limit {
	case limitFiles:
		return fmt.Sprintf("filesystem checkpoint %q exceeded limits.files (%d entries); later entries were not recorded", name, c.limits.Files)
	case limitBytes:
		return fmt.Sprintf("filesystem checkpoint %q exceeded limits.file_bytes (%d bytes hashed); later files have no sha256", name, c.limits.FileBytes)
	default:
		return fmt.Sprintf("filesystem checkpoint %q exceeded limits.filesystem_depth (%d levels); deeper entries were not recorded", name, c.limits.FilesystemDepth)
	}
}

// files is the recorded form of every entry of snap.
func (c *checkpoints) files(snap *snapshot) []FileState {
	keys := snap.sortedKeys()
	out := make([]FileState, 0, len(keys))
	for _, k := range keys {
		st := snap.states[k]
		out = append(out, c.state(k, st))
	}
	return out
}

// effects is the recorded form of raw effects.
func (c *checkpoints) effects(raw []rawEffect) []FileEffect {
	out := make([]FileEffect, 0, len(raw))
	for _, e := range raw {
		fe := FileEffect{Path: c.path(e.key), Status: e.status}
		if e.before != nil {
			b := c.state(e.key, *e.before)
			fe.Before = &b
		}
		if e.after != nil {
			a := c.state(e.key, *e.after)
			fe.After = &a
		}
		out = append(out, fe)
	}
	return out
}

// state is the recorded form of one raw state: placeholder path, redacted
// names, normalized link target.
func (c *checkpoints) state(k fileKey, st FileState) FileState {
	st.Path = c.path(k)
	if st.SymlinkTarget != nil {
		t := c.stableText(*st.SymlinkTarget)
		st.SymlinkTarget = &t
	}
	return st
}

// path is "<filesystem-root-N>" or "<filesystem-root-N>/rel" with secret
// values in rel redacted.
func (c *checkpoints) path(k fileKey) string {
	if k.rel == "" {
		return FilesystemRootPlaceholder(k.root)
	}
	return FilesystemRootPlaceholder(k.root) + "/" + c.redact.Replace(strings.ToValidUTF8(k.rel, "\uFFFD"))
}

// stableText normalizes like recorded text but without pid replacement,
// whose set grows during the capture: an unchanged link keeps one target.
func (c *checkpoints) stableText(s string) string {
	s = c.norm.replacer.Replace(strings.ToValidUTF8(s, "\uFFFD"))
	for i, re := range c.norm.patterns {
		s = re.ReplaceAllLiteralString(s, c.norm.replace[i])
	}
	return s
}

// rootExitCheckpoints takes the root_exit checkpoints once the root has
// ended (it may not have when it could not be ended at a deadline).
func (s *session) rootExitCheckpoints() {
	select {
	case <-s.tree.Exited():
		s.rec.eventCheckpoints(TriggerRootExit)
	default:
	}
}

import { describe, expect, it } from 'vitest';
import type { CaptureRecord, RenderedFrame } from './record';
import { adjacentMarker, buildTimeline, eventTimes, lastAtOrBefore, posterTime, printable, restoreSequence, seekPlan, TimeMap } from './timeline';

function rf(sequence: number, at_ms: number, text: string, columns = 10, rows = 2): RenderedFrame {
  const lines = [text.padEnd(columns), ''.padEnd(columns)];
  return { sequence, at_ms, columns, rows, cursor_x: text.length, cursor_y: 0, active_buffer: 'normal', lines, serialized_state: lines.join('\r\n') };
}

// A small record shaped like the engine's: a rendered frame after every
// raw chunk and after the resize, with the event journal in capture order.
function record(journal = true): CaptureRecord {
  const rec = {
    schema_version: 4,
    manifest: { scenario: { terminal: { columns: 10, rows: 2, scrollback: 100 } } },
    frames: [
      { sequence: 0, at_ms: 0, data: 'a' },
      { sequence: 1, at_ms: 100, data: 'b' },
      { sequence: 2, at_ms: 100, data: 'c' },
      { sequence: 3, at_ms: 5000, data: 'd' },
    ],
    rendered_frames: [rf(0, 0, 'a'), rf(1, 100, 'ab'), rf(2, 100, 'abc'), rf(3, 200, 'abc', 8, 2), rf(4, 5000, 'abcd', 8, 2)],
    interaction_events: [
      { sequence: 0, scheduled_at_ms: 50, dispatched_at_ms: 50, type: 'input', data: '<redacted-input:4-bytes>', outcome: 'dispatched' },
      { sequence: 1, scheduled_at_ms: 200, dispatched_at_ms: 200, type: 'resize', data: '8x2', outcome: 'dispatched' },
    ],
    exit: { code: 0, signal: null, reason: 'exited' },
    settlement: { state: 'quiesced', elapsed_ms: 50, cleanup_outcome: 'not_required' },
    process_samples: [{ at_ms: 50, pid: 1, parent_pid: 0, command: 'sh', process_group_id: 1, session_id: 1 }],
    filesystem_checkpoints: [
      { name: 'before', at_ms: 0, files: [], effects: [], truncated: false },
      { name: 'after_settlement', at_ms: 5100, files: [], effects: [], truncated: false },
    ],
    shim_events: [],
    protocol_events: [],
    replay_transitions: [],
    reactive_run: null,
    event_journal: [] as { capture_order: number; collection: string; index: number }[],
    files_before: [],
    files_after: [],
    filesystem_effects: [],
    truncated: false,
    limitations: [],
    residual_unknowns: [],
    cleanup: { owned_process_group: 'verified', temporary_root: 'removed' },
  };
  if (journal) {
    const order: [string, number][] = [
      ['filesystem_checkpoints', 0], ['frames', 0], ['rendered_frames', 0], ['interaction_events', 0], ['process_samples', 0],
      ['frames', 1], ['rendered_frames', 1], ['frames', 2], ['rendered_frames', 2], ['interaction_events', 1], ['rendered_frames', 3],
      ['frames', 3], ['rendered_frames', 4], ['exit', 0], ['settlement', 0], ['filesystem_checkpoints', 1],
    ];
    rec.event_journal = order.map(([collection, index], capture_order) => ({ capture_order, collection, index }));
  }
  return rec as unknown as CaptureRecord;
}

describe('buildTimeline', () => {
  it('orders ops and keyframes by the event journal', () => {
    const tl = buildTimeline(record());
    expect(tl.journaled).toBe(true);
    expect(tl.ops.map((o) => (o.kind === 'write' ? o.data : `resize ${o.columns}x${o.rows}`))).toEqual(['a', 'b', 'c', 'resize 8x2', 'd']);
    expect(tl.keyframes.map((k) => k.index)).toEqual([0, 1, 2, 3, 4]);
    expect(tl.duration).toBe(5100);
    expect(tl.initial).toEqual({ columns: 10, rows: 2, scrollback: 100 });
  });

  it('places exit and settlement after the latest observation before them', () => {
    const tl = buildTimeline(record());
    const exit = tl.markers.find((m) => m.kind === 'exit')!;
    const settle = tl.markers.find((m) => m.kind === 'settlement')!;
    expect(exit.at).toBe(5000);
    expect(exit.label).toBe('exit exited code 0');
    expect(settle.at).toBe(5050); // exit + elapsed_ms
    expect(tl.markers.map((m) => m.kind)).toEqual(['checkpoint', 'input', 'resize', 'exit', 'settlement', 'checkpoint']);
  });

  it('keeps the redaction placeholder as the input marker label', () => {
    const tl = buildTimeline(record());
    expect(tl.markers.find((m) => m.kind === 'input')!.label).toBe('input <redacted-input:4-bytes>');
  });

  it('falls back to time order without a journal, raw chunk before its rendered frame', () => {
    const tl = buildTimeline(record(false));
    expect(tl.journaled).toBe(false);
    expect(tl.ops.map((o) => o.kind)).toEqual(['write', 'write', 'write', 'resize', 'write']);
    const plan = seekPlan(tl, 100);
    expect(plan.keyframe!.index).toBe(2);
    expect(plan.to - plan.from).toBe(0);
  });
});

describe('seekPlan', () => {
  it('restores the last keyframe at or before t and applies nothing when every chunk has a frame', () => {
    const tl = buildTimeline(record());
    for (const [t, idx] of [[0, 0], [99, 0], [100, 2], [4999, 3], [5000, 4], [9999, 4]] as const) {
      const p = seekPlan(tl, t);
      expect(p.keyframe!.index, `t=${t}`).toBe(idx);
      expect(p.to - p.from, `t=${t}`).toBe(0);
    }
  });

  it('applies only the raw frames after a sparse keyframe (never from the start)', () => {
    const rec = record();
    // Keep only the first two rendered frames (as when the frame budget
    // truncated them) and the journal entries that name them.
    rec.rendered_frames = rec.rendered_frames.slice(0, 2);
    rec.event_journal = rec.event_journal.filter((j) => j.collection !== 'rendered_frames' || j.index < 2);
    const tl = buildTimeline(rec);
    const p = seekPlan(tl, 5000);
    expect(p.keyframe!.index).toBe(1);
    const applied = tl.ops.slice(p.from, p.to).map((o) => (o.kind === 'write' ? o.data : 'resize'));
    expect(applied).toEqual(['c', 'resize', 'd']);
    const early = seekPlan(tl, 150);
    expect(tl.ops.slice(early.from, early.to).map((o) => (o.kind === 'write' ? o.data : 'resize'))).toEqual(['c']);
  });

  it('starts from a blank terminal before the first keyframe', () => {
    const rec = record();
    rec.rendered_frames = [];
    rec.event_journal = rec.event_journal.filter((j) => j.collection !== 'rendered_frames');
    const tl = buildTimeline(rec);
    const p = seekPlan(tl, 100);
    expect(p.keyframe).toBeNull();
    expect(p.from).toBe(0);
    expect(p.to).toBe(3);
  });
});

describe('restoreSequence', () => {
  it('places each row of a plain state without its padding, then the cursor', () => {
    expect(restoreSequence(rf(0, 0, 'ab'))).toBe('\x1b[1;1Hab\x1b[1;3H');
    const f = { ...rf(0, 0, ''), serialized_state: '  x  \r\n\r\nlast', cursor_x: 4, cursor_y: 2 };
    expect(restoreSequence(f)).toBe('\x1b[1;1H  x\x1b[3;1Hlast\x1b[3;5H');
  });
  it('writes an escape-sequence serialization as is', () => {
    const f = { ...rf(0, 0, ''), serialized_state: '\x1b[31mred   \r\n  ' };
    expect(restoreSequence(f)).toBe('\x1b[31mred   \r\n  \x1b[1;1H');
  });
  it('switches to the alternate screen only when the state does not', () => {
    const f = { ...rf(0, 0, 'x'), active_buffer: 'alternate' as const };
    expect(restoreSequence(f).startsWith('\x1b[?1049h\x1b[H')).toBe(true);
    const g = { ...f, serialized_state: 'n\x1b[?1049h\x1b[Hx' };
    expect(restoreSequence(g).startsWith('n\x1b[?1049h')).toBe(true);
  });
});

describe('TimeMap', () => {
  it('plays real timing without a cap', () => {
    const m = new TimeMap([0, 100, 5000], 5100, null);
    expect(m.playDuration).toBe(5100);
    expect(m.toPlay(2500)).toBe(2500);
    expect(m.toCapture(2500)).toBe(2500);
  });

  it('compresses idle gaps to the cap and skips the rest', () => {
    const m = new TimeMap([0, 100, 5000], 5100, 1000);
    expect(m.playDuration).toBe(100 + 1000 + 100);
    expect(m.toPlay(100)).toBe(100);
    expect(m.toPlay(600)).toBe(600);
    expect(m.toPlay(3000)).toBe(1100); // inside the skipped part of the gap
    expect(m.toPlay(5000)).toBe(1100);
    expect(m.toPlay(5050)).toBe(1150);
    expect(m.toCapture(600)).toBe(600);
    expect(m.toCapture(1100)).toBe(5000);
    expect(m.toCapture(1150)).toBe(5050);
    expect(m.toCapture(99999)).toBe(5100);
    expect(m.toCapture(-1)).toBe(0);
  });

  it('is monotonic both ways', () => {
    const tl = buildTimeline(record());
    const m = new TimeMap(eventTimes(tl), tl.duration, 500);
    let lastP = -1;
    let lastT = -1;
    for (let t = 0; t <= tl.duration; t += 37) {
      const p = m.toPlay(t);
      expect(p).toBeGreaterThanOrEqual(lastP);
      lastP = p;
    }
    for (let p = 0; p <= m.playDuration; p += 11) {
      const t = m.toCapture(p);
      expect(t).toBeGreaterThanOrEqual(lastT);
      lastT = t;
    }
  });
});

describe('helpers', () => {
  it('lastAtOrBefore is a binary search for the last key ≤ t', () => {
    const xs = [0, 100, 100, 200];
    expect(lastAtOrBefore(xs, -1, (x) => x)).toBe(-1);
    expect(lastAtOrBefore(xs, 100, (x) => x)).toBe(2);
    expect(lastAtOrBefore(xs, 150, (x) => x)).toBe(2);
    expect(lastAtOrBefore(xs, 999, (x) => x)).toBe(3);
  });

  it('adjacentMarker steps over markers at the current time', () => {
    const tl = buildTimeline(record());
    const ats = tl.markers.map((m) => m.at); // 0, 50, 200, 5000, 5050, 5100
    expect(ats[adjacentMarker(tl.markers, 0, 1)]).toBe(50);
    expect(ats[adjacentMarker(tl.markers, 50, 1)]).toBe(200);
    expect(ats[adjacentMarker(tl.markers, 200, -1)]).toBe(50);
    expect(adjacentMarker(tl.markers, 0, -1)).toBe(-1);
    expect(adjacentMarker(tl.markers, 5100, 1)).toBe(-1);
  });

  it('printable shows control characters as escapes', () => {
    expect(printable('a\r\n\x1b[1m\x07')).toBe('a\\r\\n\\e[1m\\x07');
    expect(printable('x'.repeat(10), 4)).toBe('xxxx…');
  });
});

describe('posterTime', () => {
  it('is the first time whose screen a seek shows is not blank', () => {
    const rec = record();
    // Blank until 100 ms; the first frame at 100 ms is still blank, the
    // last one at that time (what a seek to 100 shows) is not.
    rec.rendered_frames[0] = rf(0, 0, '');
    rec.rendered_frames[1] = rf(1, 100, '');
    expect(posterTime(buildTimeline(rec))).toBe(100);
    rec.rendered_frames[2] = rf(2, 100, '   ');
    expect(posterTime(buildTimeline(rec))).toBe(200);
  });

  it('is 0 for a capture that shows something at once, or never', () => {
    expect(posterTime(buildTimeline(record()))).toBe(0);
    const rec = record();
    rec.rendered_frames = rec.rendered_frames.map((f) => rf(f.sequence, f.at_ms, '', f.columns, f.rows));
    expect(posterTime(buildTimeline(rec))).toBe(0);
  });

  it('counts the alternate screen as something shown', () => {
    const rec = record();
    rec.rendered_frames = rec.rendered_frames.map((f) => rf(f.sequence, f.at_ms, '', f.columns, f.rows));
    rec.rendered_frames[3] = { ...rec.rendered_frames[3]!, active_buffer: 'alternate' };
    expect(posterTime(buildTimeline(rec))).toBe(200);
  });
});

import { describe, expect, it } from 'vitest';
import { recordingAsCapture, type TerminalRecording } from './asciicast';
import { describeItem, differingRows, divergenceText, parseLocation, seekTimeOf, seekTimes, shortLocation, statusOf, timeOfLocation } from './compare_model';
import type { CaptureRecord, RenderedFrame } from './record';
import { buildTimeline, seekPlan } from './timeline';

function rf(sequence: number, at_ms: number, lines: string[]): RenderedFrame {
  return { sequence, at_ms, columns: 6, rows: lines.length, cursor_x: 0, cursor_y: 0, active_buffer: 'normal', lines, serialized_state: lines.join('\r\n') };
}

const rec = {
  frames: [
    { sequence: 0, at_ms: 0, data: 'a\r\n' },
    { sequence: 1, at_ms: 1200, data: 'b\r\n' },
  ],
  rendered_frames: [rf(0, 0, ['a     ', '      ']), rf(1, 1200, ['a     ', 'b     '])],
  interaction_events: [{ sequence: 0, scheduled_at_ms: 10, dispatched_at_ms: 15, type: 'input', data: 'x', outcome: 'dispatched' }],
} as unknown as CaptureRecord;

describe('journal locations', () => {
  it('parses record paths', () => {
    expect(parseLocation('$.normalized_result.frames[12]')).toEqual({ collection: 'frames', index: 12 });
    expect(parseLocation('$.normalized_result.exit')).toEqual({ collection: 'exit', index: null });
    expect(parseLocation('$.manifest')).toBeNull();
    expect(parseLocation(null)).toBeNull();
  });
  it('finds the time of the item a location names', () => {
    expect(timeOfLocation(rec, '$.normalized_result.frames[1]')).toBe(1200);
    expect(timeOfLocation(rec, '$.normalized_result.interaction_events[0]')).toBe(15);
    expect(timeOfLocation(rec, '$.normalized_result.frames[9]')).toBeNull();
    expect(timeOfLocation(rec, '$.normalized_result.exit')).toBeNull();
    // Untimed items seek to the end of the terminal output.
    expect(seekTimeOf(rec, '$.normalized_result.exit', null)).toBe(1200);
    expect(seekTimeOf(rec, '$.normalized_result.settlement', 7)).toBe(7);
    expect(shortLocation('$.normalized_result.frames[2]')).toBe('frames[2]');
  });
  it('seeks each side to its own time, or the other side for one-sided items', () => {
    expect(seekTimes({ left_at_ms: 5, right_at_ms: 9 }, rec, rec)).toEqual({ left: 5, right: 9 });
    expect(seekTimes({ left_at_ms: null, right_at_ms: 9 }, rec, rec)).toEqual({ left: 9, right: 9 });
    expect(seekTimes({ left_at_ms: null, right_at_ms: null }, rec, rec)).toEqual({ left: 1200, right: 1200 });
  });
});

describe('screen differences', () => {
  it('lists the rows whose text differs, ignoring trailing spaces', () => {
    expect(differingRows(['a', 'b  ', 'c'], ['a  ', 'b', 'x'])).toEqual([2]);
    expect(differingRows(['a', 'b'], ['a'])).toEqual([1]);
    expect(differingRows(['a', '   '], ['a'])).toEqual([]);
    expect(differingRows([], [])).toEqual([]);
  });
  it('describes items for the diff lists', () => {
    expect(describeItem({ sequence: 2, at_ms: 0, data: 'step 3\r\n' }, null)).toBe('step 3\\r\\n');
    expect(describeItem(null, {})).toBe('(nothing on this side)');
    expect(describeItem(rf(0, 0, ['same', 'left']), rf(0, 0, ['same', 'right']))).toBe('screen 6×2 — row 2: left');
    expect(describeItem({ code: 0, reason: 'exited' }, null)).toBe('{"code":0,"reason":"exited"}');
  });
  it('words statuses and divergences', () => {
    expect(statusOf('changed').tone).toBe('danger');
    expect(statusOf('unknown').label).toBe('Unknown');
    expect(statusOf('odd').label).toBe('odd');
    const fmt = (ms: number) => `${ms}ms`;
    expect(divergenceText({ status: 'none' }, fmt)).toMatch(/No divergence/);
    expect(divergenceText({ status: 'unknown', reason: 'At least one capture is truncated.' }, fmt)).toBe('At least one capture is truncated.');
    expect(
      divergenceText(
        { status: 'found', dimension: 'terminal', index: 2, left_at_ms: 0, right_at_ms: 0, left: null, right: null, left_location: '$.normalized_result.frames[2]', right_location: '$.normalized_result.frames[2]' },
        fmt,
      ),
    ).toBe('Terminal diverges first, item 2 at 0ms (left frames[2], right frames[2]).');
  });
});

describe('imported recordings', () => {
  it('replay through the capture timeline at their own size, with nothing else observed', () => {
    const r = {
      schema_version: 1,
      origin: { kind: 'imported_asciicast', label: 'Imported asciicast — terminal only', format: 'asciicast', version: 3, file_name: 'x.cast', file_sha256: '', file_bytes: 1, title: null, command: null, timestamp: null, idle_time_limit: null, term_type: null, exit_status: 2 },
      terminal: { columns: 6, rows: 2 },
      frames: rec.frames,
      rendered_frames: rec.rendered_frames,
      interaction_events: [],
      markers: [],
      dimensions: { terminal: 'observed', interaction: 'unknown', exit: 'unknown', filesystem: 'unknown', protocol: 'unknown', process: 'unknown', shim: 'unknown' },
      residual_unknowns: [],
      truncated: false,
      limitations: [],
    } as TerminalRecording;
    const cap = recordingAsCapture(r);
    expect(cap.process_samples).toEqual([]);
    expect(cap.filesystem_checkpoints).toEqual([]);
    const tl = buildTimeline(cap);
    expect(tl.initial).toEqual({ columns: 6, rows: 2, scrollback: 1000 });
    expect(tl.ops.map((o) => o.kind)).toEqual(['write', 'write']);
    const plan = seekPlan(tl, 1200);
    expect(plan.keyframe?.frame.lines).toEqual(['a     ', 'b     ']);
    expect(plan.to - plan.from).toBe(0); // the keyframe alone shows the screen
  });
});

import { describe, expect, it } from 'vitest';
import { countdown, formatBytes, formatDuration, formatWhen, humanize, prettyJson, relativeOffset, shortHash, unwrap } from './format';

describe('format', () => {
  it('shortens revisions', () => {
    expect(shortHash('sha256:3c791fc343b7078584abcff4d4b5ad2852d71d1e4287dd60baf3469057f50818')).toBe('3c791fc343b7');
    expect(shortHash('abcdef', 4)).toBe('abcd');
    expect(shortHash(undefined)).toBe('');
  });

  it('formats byte sizes', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1024)).toBe('1 KiB');
    expect(formatBytes(16384)).toBe('16 KiB');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(262144)).toBe('256 KiB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5 MiB');
    expect(formatBytes(undefined)).toBe('—');
  });

  it('formats durations', () => {
    expect(formatDuration(0)).toBe('0 ms');
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(1000)).toBe('1 s');
    expect(formatDuration(1250)).toBe('1.3 s');
    expect(formatDuration(5000)).toBe('5 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(125_000)).toBe('2 min 5 s');
    expect(formatDuration(120_000)).toBe('2 min');
    expect(formatDuration(3_900_000)).toBe('1 h 5 min');
    expect(formatDuration(-5)).toBe('0 ms');
    expect(formatDuration(null)).toBe('—');
    expect(relativeOffset(12)).toBe('+12 ms');
  });

  it('counts down as mm:ss and never below zero', () => {
    expect(countdown(300_000)).toBe('05:00');
    expect(countdown(299_001)).toBe('05:00');
    expect(countdown(299_000)).toBe('04:59');
    expect(countdown(61_000)).toBe('01:01');
    expect(countdown(500)).toBe('00:01');
    expect(countdown(0)).toBe('00:00');
    expect(countdown(-4000)).toBe('00:00');
  });

  it('treats Go zero times as missing', () => {
    expect(formatWhen('0001-01-01T00:00:00Z')).toBe('—');
    expect(formatWhen('garbage')).toBe('—');
    expect(formatWhen(null)).toBe('—');
  });

  it('pretty-prints JSON values and JSON text', () => {
    expect(prettyJson({ a: 1 })).toBe('{\n  "a": 1\n}');
    expect(prettyJson('{"a":1}')).toBe('{\n  "a": 1\n}');
    expect(prettyJson('not json')).toBe('not json');
    expect(prettyJson(undefined)).toBe('');
  });

  it('unwraps hard-wrapped server text', () => {
    expect(unwrap('This script runs with YOUR full permissions: it can read\nand change your files.\n\nSecond.')).toBe(
      'This script runs with YOUR full permissions: it can read and change your files.\n\nSecond.',
    );
  });

  it('humanizes codes', () => {
    expect(humanize('prompt_only')).toBe('Prompt only');
  });
});

describe('formatStamp', () => {
  it('always shows the date', async () => {
    const { formatStamp } = await import('./format');
    const now = new Date();
    const s = formatStamp(now);
    expect(s).toContain(String(now.getFullYear()));
    expect(formatStamp('not a date')).toBe('—');
  });
});

import { describe, expect, it } from 'vitest';
import type { EvidenceItem } from '../api/types';
import { filterItems, pairAttestations, signatureLabel, sortItems } from './library';
import { processTree } from './panels';

function item(id: string, at: string, size: number, command: string, exit?: { code: number | null; signal: string | null; reason: string }, extra = {}, shared = false): EvidenceItem {
  return {
    evidence_id: 'ev_' + id.padEnd(64, '0'),
    predicate_type: 'gatehouse.process-capture/v4',
    operation: 'capture_process_scenario',
    origin: 'captured',
    size,
    created_at: at,
    shared,
    signature: { status: 'unsigned' },
    summary: { command, exit, settlement: 'quiesced', ...extra },
  };
}

const items = [
  item('a', '2026-11-30T10:00:00Z', 300, '/bin/sh -c make test', { code: 0, signal: null, reason: 'exited' }),
  item('b', '2026-11-30T11:00:00Z', 100, '/usr/bin/env node build.js', { code: 2, signal: null, reason: 'exited' }, { file_name: 'ci-run.json' }),
  item('c', '2026-11-30T09:00:00Z', 200, '/bin/sleep 100', { code: null, signal: null, reason: 'timeout' }, { truncated: true }, true),
];

describe('library search and sort', () => {
  it('matches every word anywhere in command, file name, id, exit or flags', () => {
    expect(filterItems(items, '').length).toBe(3);
    expect(filterItems(items, 'NODE').map((i) => i.evidence_id[3])).toEqual(['b']);
    expect(filterItems(items, 'ci-run').map((i) => i.evidence_id[3])).toEqual(['b']);
    expect(filterItems(items, 'exit 2').map((i) => i.evidence_id[3])).toEqual(['b']);
    expect(filterItems(items, 'timeout truncated').map((i) => i.evidence_id[3])).toEqual(['c']);
    expect(filterItems(items, 'ev_a').map((i) => i.evidence_id[3])).toEqual(['a']);
    expect(filterItems(items, 'make node')).toEqual([]);
    expect(filterItems(items, 'shared').map((i) => i.evidence_id[3])).toEqual(['c']);
  });

  it('sorts by time, command, size and exit status', () => {
    const ids = (xs: EvidenceItem[]) => xs.map((i) => i.evidence_id[3]).join('');
    expect(ids(sortItems(items, 'newest'))).toBe('bac');
    expect(ids(sortItems(items, 'oldest'))).toBe('cab');
    expect(ids(sortItems(items, 'command'))).toBe('acb'); // /bin/sh… < /bin/sleep… < /usr/…
    expect(ids(sortItems(items, 'size'))).toBe('acb');
    expect(ids(sortItems(items, 'exit'))).toBe('abc');
    expect(ids(items)).toBe('abc'); // not sorted in place
  });
});

describe('processTree', () => {
  it('nests processes under their parents with their sample times and commands', () => {
    const s = (at_ms: number, pid: number, parent_pid: number, command: string) => ({ at_ms, pid, parent_pid, command, process_group_id: 10, session_id: 10 });
    const roots = processTree([s(50, 10, 1, 'sh -c x'), s(100, 11, 10, 'sleep 1'), s(150, 12, 10, 'sh'), s(200, 12, 10, 'grep y'), s(250, 13, 12, 'cat')]);
    expect(roots.map((r) => r.pid)).toEqual([10]);
    expect(roots[0]!.children.map((c) => c.pid)).toEqual([11, 12]);
    const p12 = roots[0]!.children[1]!;
    expect(p12.commands).toEqual(['sh', 'grep y']);
    expect(p12.seen).toEqual([150, 200]);
    expect(p12.children.map((c) => c.pid)).toEqual([13]);
  });
});

describe('attestations in the library', () => {
  it('pairs FILE with FILE.intoto.jsonl and reports attestations without their file', () => {
    const f = (name: string) => ({ name });
    const r = pairAttestations([f('a.json'), f('b.json.intoto.jsonl'), f('a.json.intoto.jsonl'), f('c.json'), f('d.json.intoto.jsonl'), f('b.json')]);
    expect(r.evidence.map((e) => [e.file.name, e.attestation?.name])).toEqual([
      ['a.json', 'a.json.intoto.jsonl'],
      ['c.json', undefined],
      ['b.json', 'b.json.intoto.jsonl'],
    ]);
    expect(r.orphans.map((o) => o.name)).toEqual(['d.json.intoto.jsonl']);
  });
  it('says who signed every file', () => {
    const fp = 'SHA256:zdwLoppMuRA8XNDUUwXz6lgnQsdNlKngc1i39VEN1RA';
    expect(signatureLabel({ status: 'installation', fingerprint: fp }).text).toBe('signed by this installation');
    expect(signatureLabel({ status: 'trusted', fingerprint: fp }).text).toBe('signed by SHA256:zdwLoppM…N1RA');
    expect(signatureLabel({ status: 'untrusted', fingerprint: fp })).toMatchObject({ text: 'signed by SHA256:zdwLoppM…N1RA (not trusted)', tone: 'warn' });
    expect(signatureLabel({ status: 'invalid', message: 'changed' })).toMatchObject({ text: 'signature invalid', tone: 'danger', title: 'changed' });
    expect(signatureLabel({ status: 'unsigned' }).text).toBe('unsigned');
    expect(signatureLabel(undefined).text).toBe('unsigned');
  });
});

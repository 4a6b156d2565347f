// The panels under the replay: interaction events, the process tree over
// time, filesystem checkpoints and their effects, shim calls, protocol
// exchanges, manifest commitments (re-verified in the browser) and
// limitations. Rows that have a time seek the player when clicked.

import { h } from '../lib/dom';
import { formatBytes, shortHash } from '../lib/format';
import { badge, emptyState, loading } from '../lib/ui';
import type { Tone } from '../lib/labels';
import { formatMs, recordedText } from './format';
import type { CaptureRecord, FileEffect, FileState, ProcessSample } from './record';
import type { CommitmentCheck } from './verify';

/** Rows shown per table before "and N more". */
const MAX_ROWS = 2000;

export type PanelName = 'events' | 'processes' | 'filesystem' | 'shims' | 'protocol' | 'commitments' | 'limitations';

export interface PanelContext {
  rec: CaptureRecord;
  duration: number;
  seek: (ms: number) => void;
  /** null while the browser is still computing. */
  checks: CommitmentCheck[] | null;
  checkError: string | null;
}

export const PANELS: { name: PanelName; label: string; count: (r: CaptureRecord) => number | null }[] = [
  { name: 'events', label: 'Interaction', count: (r) => r.interaction_events.length },
  { name: 'processes', label: 'Processes', count: (r) => new Set(r.process_samples.map((s) => s.pid)).size },
  { name: 'filesystem', label: 'Filesystem', count: (r) => r.filesystem_checkpoints.length },
  { name: 'shims', label: 'Shim calls', count: (r) => r.shim_events.length },
  { name: 'protocol', label: 'Protocol', count: (r) => r.protocol_events.length },
  { name: 'commitments', label: 'Commitments', count: () => null },
  { name: 'limitations', label: 'Limitations', count: (r) => r.limitations.length + r.residual_unknowns.length },
];

/** A clickable row that seeks to `at`. */
function seekRow(ctx: PanelContext, at: number, testid: string, ...cells: HTMLElement[]): HTMLTableRowElement {
  const go = () => ctx.seek(at);
  return h(
    'tr',
    {
      class: 'clickable',
      tabindex: '0',
      'data-testid': testid,
      dataset: { at: String(at) },
      title: `Seek to ${formatMs(at)}`,
      onclick: go,
      onkeydown: (e: KeyboardEvent) => {
        if (e.key === 'Enter') {
          e.preventDefault();
          e.stopPropagation();
          go();
        }
      },
    },
    ...cells,
  );
}

function table(testid: string, head: string[], rows: HTMLTableRowElement[], total: number, numeric: number[] = []): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'table compact ev-table', 'data-testid': testid },
      h('thead', null, h('tr', null, head.map((c, i) => h('th', { scope: 'col', class: numeric.includes(i) ? 'num' : undefined }, c)))),
      h('tbody', null, rows),
    ),
    total > rows.length ? h('p', { class: 'table-count muted small' }, `Showing the first ${rows.length} of ${total}.`) : null,
  );
}

const time = (ms: number) => h('td', { class: 'num nowrap mono' }, formatMs(ms));

function outcomeTone(o: string): Tone {
  return o === 'dispatched' || o === 'matched' ? 'ok' : o === 'target_exited' || o === 'exhausted' ? 'warn' : o === 'unmatched' || o === 'failed' ? 'danger' : 'neutral';
}

/** The body of one panel. */
export function panelBody(name: PanelName, ctx: PanelContext): HTMLElement {
  switch (name) {
    case 'events':
      return eventsPanel(ctx);
    case 'processes':
      return processPanel(ctx);
    case 'filesystem':
      return filesystemPanel(ctx);
    case 'shims':
      return shimsPanel(ctx);
    case 'protocol':
      return protocolPanel(ctx);
    case 'commitments':
      return commitmentsPanel(ctx);
    case 'limitations':
      return limitationsPanel(ctx);
  }
}

function eventsPanel(ctx: PanelContext): HTMLElement {
  const ev = ctx.rec.interaction_events;
  if (!ev.length) return emptyState('No interaction events', 'The scenario scheduled no input, resize, stdin close or signal.');
  const rows = ev.slice(0, MAX_ROWS).map((e) =>
    seekRow(
      ctx,
      e.dispatched_at_ms,
      'ev-event-row',
      h('td', { class: 'num' }, e.sequence),
      time(e.scheduled_at_ms),
      time(e.dispatched_at_ms),
      h('td', null, badge(e.type.replace('_', ' '), e.type === 'signal' ? 'warn' : e.type === 'input' ? 'accent' : 'info')),
      h('td', { class: 'ev-data-cell' }, recordedText(e.data)),
      h('td', null, badge(e.outcome.replace('_', ' '), outcomeTone(e.outcome))),
    ),
  );
  return table('ev-events', ['#', 'Scheduled', 'Dispatched', 'Type', 'Data', 'Outcome'], rows, ev.length, [0, 1, 2]);
}

interface Proc {
  pid: number;
  ppid: number;
  commands: string[];
  first: number;
  last: number;
  /** Times of its samples (first sight and identity changes). */
  seen: number[];
  pgid: number | null;
  sid: number | null;
  children: Proc[];
}

/** The owned process tree from the samples: each pid with its parent,
 * the commands it ran, and when it was first and last seen. */
export function processTree(samples: ProcessSample[]): Proc[] {
  const byPid = new Map<number, Proc>();
  for (const s of samples) {
    let p = byPid.get(s.pid);
    if (!p) {
      p = { pid: s.pid, ppid: s.parent_pid, commands: [], first: s.at_ms, last: s.at_ms, seen: [], pgid: s.process_group_id, sid: s.session_id, children: [] };
      byPid.set(s.pid, p);
    }
    p.seen.push(s.at_ms);
    p.last = Math.max(p.last, s.at_ms);
    p.first = Math.min(p.first, s.at_ms);
    if (p.commands[p.commands.length - 1] !== s.command) p.commands.push(s.command);
  }
  const roots: Proc[] = [];
  for (const p of byPid.values()) {
    const parent = byPid.get(p.ppid);
    if (parent && parent !== p) parent.children.push(p);
    else roots.push(p);
  }
  const sort = (xs: Proc[]) => {
    xs.sort((a, b) => a.first - b.first || a.pid - b.pid);
    xs.forEach((x) => sort(x.children));
  };
  sort(roots);
  return roots;
}

function processPanel(ctx: PanelContext): HTMLElement {
  const roots = processTree(ctx.rec.process_samples);
  if (!roots.length) return emptyState('No process samples', 'The owned process tree was not sampled (it ended before the first 50 ms sample).');
  const dur = Math.max(1, ctx.duration);
  const rows: HTMLElement[] = [];
  let count = 0;
  const walk = (p: Proc, depth: number) => {
    if (count++ >= MAX_ROWS) return;
    // Samples are taken when a process is first seen and when its
    // identity changes (not when it ends), so each sample is a tick.
    const ticks = p.seen.map((at) => {
      const t = h('span', { class: 'ev-life', title: formatMs(at) });
      t.style.left = `${(at / dur) * 100}%`;
      return t;
    });
    const row = h(
      'div',
      {
        class: 'ev-proc',
        role: 'treeitem',
        'aria-level': String(depth + 1),
        tabindex: '0',
        'data-testid': 'ev-proc-row',
        dataset: { at: String(p.first), pid: String(p.pid), first: String(p.first), last: String(p.last) },
        title: `Seek to ${formatMs(p.first)} (first seen)`,
        onclick: () => ctx.seek(p.first),
        onkeydown: (e: KeyboardEvent) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            e.stopPropagation();
            ctx.seek(p.first);
          }
        },
      },
      h(
        'div',
        { class: 'ev-proc-main' },
        h('span', { class: 'ev-indent' }),
        h('code', { class: 'mono ev-pid' }, String(p.pid)),
        h('span', { class: 'ev-proc-cmd' }, recordedText(p.commands[p.commands.length - 1] ?? '', 160)),
        p.commands.length > 1 ? badge(`exec ×${p.commands.length - 1}`, 'info', p.commands.join('\n→ ')) : null,
      ),
      h('div', { class: 'ev-proc-track', 'aria-hidden': 'true' }, ticks),
      h('span', { class: 'ev-proc-when mono small muted' }, `seen ${formatMs(p.first)}${p.seen.length > 1 ? ` (+${p.seen.length - 1})` : ''}`),
    );
    (row.firstElementChild!.firstElementChild as HTMLElement).style.width = `${depth * 18}px`;
    rows.push(row);
    p.children.forEach((c) => walk(c, depth + 1));
  };
  roots.forEach((r) => walk(r, 0));
  return h(
    'div',
    { class: 'ev-procs' },
    h('p', { class: 'muted small' }, 'The owned process tree from 50 ms samples: each process under its parent, placed on the timeline where it was first seen (and where its command or identity changed). Processes are not sampled when they end. Click a process to seek to its first sample.'),
    h('div', { class: 'ev-proc-list', role: 'tree', 'data-testid': 'ev-proc-tree' }, rows),
  );
}

function fileCell(f: FileState | null): HTMLElement {
  if (!f) return h('td', { class: 'muted' }, '—');
  const bits = [f.type, `${(f.mode & 0o7777).toString(8).padStart(4, '0')}`, f.type === 'file' || f.type === 'symlink' ? formatBytes(f.size) : ''].filter(Boolean).join(' · ');
  return h(
    'td',
    { class: 'ev-file' },
    f.sha256 ? h('code', { class: 'mono small', title: `sha256 ${f.sha256}` }, shortHash(f.sha256, 12)) : f.symlink_target ? h('code', { class: 'mono small' }, `→ ${f.symlink_target}`) : null,
    h('div', { class: 'muted small' }, bits),
  );
}

const EFFECT_TONE: Record<FileEffect['status'], Tone> = { created: 'ok', deleted: 'danger', modified: 'warn', unchanged: 'neutral' };

function filesystemPanel(ctx: PanelContext): HTMLElement {
  const cps = ctx.rec.filesystem_checkpoints;
  const roots = ((ctx.rec.manifest.scenario as { filesystem_roots?: string[] }).filesystem_roots ?? []).length;
  if (!roots) {
    return emptyState('No filesystem roots', 'The scenario named no filesystem roots, so checkpoints recorded no files. Effects outside the roots are not observed.');
  }
  return h(
    'div',
    { class: 'ev-checkpoints' },
    cps.map((c, i) =>
      h(
        'section',
        { class: 'ev-checkpoint', 'data-testid': 'ev-checkpoint', dataset: { name: c.name, at: String(c.at_ms) } },
        h(
          'header',
          {
            class: 'ev-checkpoint-head clickable',
            tabindex: '0',
            title: `Seek to ${formatMs(c.at_ms)}`,
            onclick: () => ctx.seek(c.at_ms),
            onkeydown: (e: KeyboardEvent) => {
              if (e.key === 'Enter') {
                e.preventDefault();
                e.stopPropagation();
                ctx.seek(c.at_ms);
              }
            },
          },
          h('strong', null, c.name),
          h('span', { class: 'mono small muted' }, formatMs(c.at_ms)),
          h('span', { class: 'muted small' }, `${c.files.length} file${c.files.length === 1 ? '' : 's'}`),
          i === 0 ? h('span', { class: 'muted small' }, 'baseline') : h('span', { class: 'muted small' }, `${c.effects.length} effect${c.effects.length === 1 ? '' : 's'} since ${cps[i - 1]!.name}`),
          c.truncated ? badge('truncated', 'danger', 'This checkpoint hit a filesystem limit; the capture is truncated') : null,
        ),
        c.effects.length
          ? table(
              'ev-effects',
              ['Effect', 'Path', 'Before', 'After'],
              c.effects.slice(0, MAX_ROWS).map((e) =>
                seekRow(ctx, c.at_ms, 'ev-effect-row', h('td', null, badge(e.status, EFFECT_TONE[e.status])), h('td', null, recordedText(e.path, 300)), fileCell(e.before), fileCell(e.after)),
              ),
              c.effects.length,
            )
          : i > 0
            ? h('p', { class: 'muted small ev-none' }, 'No changes.')
            : null,
      ),
    ),
  );
}

function shimsPanel(ctx: PanelContext): HTMLElement {
  const ev = ctx.rec.shim_events;
  if (!ev.length) return emptyState('No shim calls', 'No command shim was called (or the scenario defined none).');
  const rows = ev.slice(0, MAX_ROWS).map((s) =>
    seekRow(
      ctx,
      s.at_ms,
      'ev-shim-row',
      h('td', { class: 'num' }, s.sequence),
      time(s.at_ms),
      h('td', null, h('code', { class: 'mono' }, s.command)),
      h('td', { class: 'ev-data-cell' }, recordedText(s.arguments.join(' '), 200)),
      h('td', null, recordedText(s.working_directory, 120)),
      h('td', { class: 'num' }, s.route_index === null ? '—' : String(s.route_index)),
      h('td', null, badge(s.outcome, outcomeTone(s.outcome))),
    ),
  );
  return table('ev-shims', ['#', 'At', 'Command', 'Arguments', 'Working directory', 'Route', 'Outcome'], rows, ev.length, [0, 1, 5]);
}

function protocolPanel(ctx: PanelContext): HTMLElement {
  const ev = ctx.rec.protocol_events;
  if (!ev.length) return emptyState('No protocol exchanges', 'The target made no loopback HTTP or WebSocket exchange with Gatehouse’s replay.');
  const rows = ev.slice(0, MAX_ROWS).map((p) =>
    seekRow(
      ctx,
      p.at_ms,
      'ev-protocol-row',
      h('td', { class: 'num' }, p.sequence),
      time(p.at_ms),
      h('td', null, badge(p.protocol, 'info')),
      h('td', null, p.direction),
      h('td', null, h('code', { class: 'mono' }, [p.method, p.path].filter(Boolean).join(' ') || '—')),
      h('td', { class: 'ev-data-cell' }, recordedText(p.data, 200)),
      h('td', null, badge(p.outcome, outcomeTone(p.outcome))),
    ),
  );
  return table('ev-protocol', ['#', 'At', 'Protocol', 'Direction', 'Request', 'Data', 'Outcome'], rows, ev.length, [0, 1]);
}

function commitmentsPanel(ctx: PanelContext): HTMLElement {
  const intro = h(
    'p',
    { class: 'muted small' },
    'Each digest is recomputed here, in this browser, with WebCrypto SHA-256 over the RFC 8785 canonical JSON of the value it commits to — independently of the Gatehouse backend, which also verified the file (envelope, evidence id, every commitment and record invariant) when it was opened.',
  );
  if (ctx.checkError) return h('div', null, intro, h('p', { class: 'ev-text-danger' }, ctx.checkError));
  if (!ctx.checks) return h('div', null, intro, loading('Recomputing the commitments in this browser…'));
  const rows = ctx.checks.map((c) =>
    h(
      'tr',
      { 'data-testid': 'ev-commitment', dataset: { path: c.path, ok: String(c.ok) } },
      h(
        'td',
        { class: 'ev-verdict' },
        c.ok === true ? h('span', { class: 'ev-ok', role: 'img', 'aria-label': 'verified' }, '✓') : c.ok === false ? h('span', { class: 'ev-bad', role: 'img', 'aria-label': 'mismatch' }, '✗') : h('span', { class: 'muted', role: 'img', 'aria-label': 'not checkable here' }, '—'),
      ),
      h('td', null, h('code', { class: 'mono small' }, c.path), h('div', { class: 'muted small' }, c.covers)),
      h('td', null, h('code', { class: 'mono small', title: c.expected }, shortHash(c.expected.replace(/^ev_/, ''), 16))),
      h('td', null, c.actual ? h('code', { class: 'mono small', title: c.actual }, shortHash(c.actual.replace(/^ev_/, ''), 16)) : h('span', { class: 'muted small' }, c.note ?? '—')),
    ),
  );
  const bad = ctx.checks.filter((c) => c.ok === false).length;
  return h(
    'div',
    null,
    intro,
    h('p', { class: bad ? 'ev-text-danger' : 'ev-text-ok', 'data-testid': 'ev-commitments-summary' }, bad ? `${bad} commitment${bad === 1 ? '' : 's'} do not match.` : `All ${ctx.checks.filter((c) => c.ok).length} recomputable commitments match.`),
    h(
      'div',
      { class: 'table-wrap' },
      h('table', { class: 'table compact ev-table', 'data-testid': 'ev-commitments' }, h('thead', null, h('tr', null, h('th', null, ''), h('th', null, 'Commitment'), h('th', null, 'Recorded'), h('th', null, 'Computed here'))), h('tbody', null, rows)),
    ),
  );
}

function limitationsPanel(ctx: PanelContext): HTMLElement {
  const r = ctx.rec;
  return h(
    'div',
    { class: 'ev-limits' },
    r.truncated ? h('div', { class: 'alert tone-danger', role: 'note' }, h('div', null, h('strong', null, 'Truncated. '), 'A limit was reached while capturing; this capture never compares as equivalent.')) : null,
    h('h3', { class: 'label' }, 'Limitations'),
    r.limitations.length ? h('ul', { class: 'ev-list', 'data-testid': 'ev-limitations' }, r.limitations.map((l) => h('li', null, l))) : h('p', { class: 'muted small' }, 'None recorded.'),
    h('h3', { class: 'label' }, 'Residual unknowns'),
    r.residual_unknowns.length
      ? h(
          'ul',
          { class: 'ev-list', 'data-testid': 'ev-unknowns' },
          r.residual_unknowns.map((u) => h('li', null, badge(u.scope, 'warn'), ' ', u.reason)),
        )
      : h('p', { class: 'muted small' }, 'None: every dimension was observed by a mechanism the capture names above.'),
    h('h3', { class: 'label' }, 'Cleanup'),
    h('p', { class: 'small' }, `Owned process group ${r.cleanup.owned_process_group}; temporary root ${r.cleanup.temporary_root}.`),
  );
}

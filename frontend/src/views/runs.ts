// Runs: active runs (live progress, Cancel) above the run history, with
// filters; a run's detail shows its envelope, stderr, progress and the
// lifecycle journal as a timeline.

import { api, onEvent, onReconnect } from '../api/client';
import type { ActiveRun, Envelope, RunRecord, StoredEvent } from '../api/types';
import { h, icon, replace } from '../lib/dom';
import { formatBytes, formatDateTime, formatDuration, formatStamp, prettyJson, relativeOffset, shortHash } from '../lib/format';
import { RUN_STATUS, runEventLabel, runStatus } from '../lib/labels';
import { runOutcome } from '../lib/outcome';
import { badge, codeBlock, emptyState, errorBox, filterField, hashChip, kv, loading, pageHead, pathText, progressBar } from '../lib/ui';
import type { View } from './view';

const HISTORY_LIMIT = 500;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/;

export function runsView(): View {
  const el = h('div', { class: 'page runs-view' });
  let runs: RunRecord[] | null = null;
  /** Agent names by id (the history records ids). */
  let agentNames = new Map<string, string>();
  let active: ActiveRun[] = [];
  let loadError: unknown = null;
  let loadingNow = false;
  const filters = { status: '', skill: '', agent: '' };
  let detailId = '';
  let journal: { id: string; events: StoredEvent[] | null; error: unknown } = { id: '', events: null, error: null };
  const cancelling = new Set<string>();
  let reloadTimer: ReturnType<typeof setTimeout> | undefined;
  let tickTimer: ReturnType<typeof setInterval> | undefined;

  async function load(): Promise<void> {
    loadingNow = true;
    try {
      const [r, ag] = await Promise.all([
        api.ListRuns({ limit: HISTORY_LIMIT, ...(filters.status ? { status: filters.status } : {}), ...(filters.skill ? { skill: filters.skill } : {}) }),
        api.ListAgents({}).catch(() => null),
      ]);
      if (ag) agentNames = new Map(ag.agents.map((a) => [a.id, a.name]));
      runs = r.runs ?? [];
      active = r.active ?? [];
      loadError = null;
    } catch (e) {
      loadError = e;
    } finally {
      loadingNow = false;
    }
    render();
    if (detailId) void loadJournal(detailId);
  }

  function scheduleReload(): void {
    clearTimeout(reloadTimer);
    reloadTimer = setTimeout(() => void load(), 250);
  }

  async function loadJournal(id: string, force = false): Promise<void> {
    if (!force && journal.id === id && journal.events) return;
    journal = { id, events: journal.id === id ? journal.events : null, error: null };
    try {
      const r = await api.RunEvents({ attemptId: id });
      if (detailId !== id) return;
      journal = { id, events: (r.events ?? []).slice().sort((a, b) => a.seq - b.seq), error: null };
    } catch (e) {
      journal = { id, events: null, error: e };
    }
    render();
  }

  async function cancel(runId: string): Promise<void> {
    cancelling.add(runId);
    render();
    try {
      await api.CancelRun({ runId });
    } catch (e) {
      console.warn('gatehouse: cancel failed', e);
    }
    scheduleReload();
  }

  // ---- rendering --------------------------------------------------------

  function render(): void {
    const scroll = el.scrollTop;
    const focusedTestId = document.activeElement instanceof HTMLElement && el.contains(document.activeElement) ? document.activeElement.dataset.testid : undefined;
    if (detailId) replace(el, detail());
    else replace(el, listPage());
    el.scrollTop = scroll;
    if (focusedTestId && focusedTestId !== 'run-row') el.querySelector<HTMLElement>(`[data-testid="${focusedTestId}"]`)?.focus();
    if (active.length && !tickTimer) tickTimer = setInterval(tickElapsed, 1000);
    if (!active.length && tickTimer) {
      clearInterval(tickTimer);
      tickTimer = undefined;
    }
  }

  function tickElapsed(): void {
    el.querySelectorAll<HTMLElement>('[data-since]').forEach((n) => {
      n.textContent = formatDuration(Date.now() - Date.parse(n.dataset.since ?? ''));
    });
  }

  function listPage(): Node[] {
    const skills = [...new Set((runs ?? []).map((r) => r.skill).concat(filters.skill ? [filters.skill] : []))].sort();
    const head = pageHead(
      'Runs',
      'Every attempt and refusal, with the rule that decided it.',
      filterField(
        'Status',
        h(
          'select',
          { class: 'input small', 'data-testid': 'runs-filter-status', onchange: (e: Event) => ((filters.status = (e.target as HTMLSelectElement).value), void load()) },
          h('option', { value: '' }, 'All'),
          Object.entries(RUN_STATUS).map(([k, v]) => h('option', { value: k, selected: filters.status === k }, v.label)),
        ),
      ),
      filterField(
        'Skill',
        h(
          'select',
          { class: 'input small', 'data-testid': 'runs-filter-skill', onchange: (e: Event) => ((filters.skill = (e.target as HTMLSelectElement).value), void load()) },
          h('option', { value: '' }, 'All'),
          skills.map((s) => h('option', { value: s, selected: filters.skill === s }, s)),
        ),
      ),
      filterField(
        'Agent',
        h('input', {
          type: 'search',
          class: 'input small',
          placeholder: 'name or id…',
          value: filters.agent,
          'data-testid': 'runs-filter-agent',
          oninput: (e: Event) => {
            filters.agent = (e.target as HTMLInputElement).value;
            const body = el.querySelector('[data-testid="runs-table"] tbody');
            if (body) replace(body, rows());
            const count = el.querySelector('.table-count');
            if (count) count.textContent = countText();
          },
        }),
      ),
      h('button', { type: 'button', class: 'btn small', onclick: () => void load(), disabled: loadingNow }, loadingNow ? 'Refreshing…' : 'Refresh'),
    );
    const out: Node[] = [head];
    if (active.length) out.push(activeSection());
    if (loadError) out.push(errorBox(loadError, 'Could not load the run history.'));
    else if (!runs) out.push(loading('Loading runs…'));
    else if (runs.length === 0 && !filters.status && !filters.skill) {
      out.push(
        active.length
          ? emptyState('No finished runs yet', 'Finished and refused attempts are listed here with their envelope and lifecycle journal.')
          : emptyState('No runs yet', 'Runs appear here when an agent (or you, from Skills → Run…) asks to run a skill’s script, including refused attempts.'),
      );
    } else {
      out.push(
        h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'table runs-table', 'data-testid': 'runs-table' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                h('th', { scope: 'col' }, 'Time'),
                h('th', { scope: 'col' }, 'Skill'),
                h('th', { scope: 'col' }, 'Agent'),
                h('th', { scope: 'col' }, 'Revision'),
                h('th', { scope: 'col' }, 'Outcome'),
                h('th', { scope: 'col' }, 'Status'),
                h('th', { scope: 'col', class: 'num' }, 'Duration'),
              ),
            ),
            h('tbody', null, rows()),
          ),
          h('p', { class: 'table-count muted small' }, countText()),
        ),
      );
    }
    return out;
  }

  /** The agent's name (its id when it is not, or no longer, registered). */
  function agentName(id: string): string {
    return agentNames.get(id) || id;
  }

  function visibleRuns(): RunRecord[] {
    const q = filters.agent.trim().toLowerCase();
    return (runs ?? []).filter((r) => !q || r.agent.toLowerCase().includes(q) || agentName(r.agent).toLowerCase().includes(q));
  }

  function countText(): string {
    const n = visibleRuns().length;
    const total = runs?.length ?? 0;
    const base = n === total ? `${n} run${n === 1 ? '' : 's'}` : `${n} of ${total} runs`;
    return total >= HISTORY_LIMIT ? `${base} (the latest ${HISTORY_LIMIT})` : base;
  }

  function rows(): Node[] {
    const list = visibleRuns();
    if (list.length === 0) {
      return [h('tr', { class: 'empty-row' }, h('td', { colspan: '7' }, emptyState('No matching runs', 'Change or clear the filters above to see more of the history.')))];
    }
    return list.map((r) => {
      const st = runStatus(r.status);
      const oc = runOutcome(r);
      const open = () => (location.hash = `#/runs/${encodeURIComponent(r.attempt_id)}`);
      return h(
        'tr',
        {
          class: 'clickable',
          'data-testid': 'run-row',
          dataset: { status: r.status, attempt: r.attempt_id },
          tabindex: '0',
          onclick: open,
          onkeydown: (e: KeyboardEvent) => {
            if (e.key === 'Enter' || e.key === ' ') {
              e.preventDefault();
              open();
            }
          },
        },
        h('td', { class: 'nowrap', title: formatDateTime(r.started_at) }, h('time', { datetime: r.started_at }, formatStamp(r.started_at))),
        h('td', null, h('a', { href: `#/runs/${encodeURIComponent(r.attempt_id)}`, class: 'row-link', tabindex: '-1' }, r.skill)),
        h('td', { title: r.agent }, agentName(r.agent)),
        h('td', null, r.revision ? h('code', { class: 'mono', title: r.revision }, shortHash(r.revision, 10)) : h('span', { class: 'muted' }, '—')),
        h('td', { class: 'ellipsis', title: `${oc.text} (recorded rule: ${r.authorized_by || 'none'})`, 'data-testid': 'run-outcome' }, badge(oc.label, oc.tone)),
        h('td', null, badge(st.label, st.tone, st.text)),
        h('td', { class: 'num nowrap' }, formatDuration(r.elapsed_ms)),
      );
    });
  }

  function activeSection(): HTMLElement {
    return h(
      'section',
      { class: 'active-runs', 'aria-label': 'Active runs' },
      h('h2', { class: 'label' }, `Active now (${active.length})`),
      active.map((a) =>
        h(
          'div',
          { class: 'active-run', 'data-testid': 'active-run', dataset: { runId: a.runId } },
          h(
            'div',
            { class: 'active-main' },
            h('div', null, h('strong', null, a.skill), h('span', { class: 'muted' }, ` · ${agentName(a.agent)}`)),
            h(
              'div',
              { class: 'muted small' },
              a.state === 'waiting' ? badge('Waiting for approval', 'accent') : badge('Running', 'info'),
              ' started ',
              formatStamp(a.startedAt),
              ' · ',
              h('span', { dataset: { since: a.startedAt } }, formatDuration(Date.now() - Date.parse(a.startedAt))),
            ),
          ),
          h('div', { class: 'active-progress' }, a.state === 'running' ? progressBar(a.progress, 'Running…') : h('span', { class: 'muted small' }, 'Nothing runs until the request is approved.')),
          h(
            'button',
            { type: 'button', class: 'btn danger-outline small', 'data-testid': 'run-cancel', disabled: cancelling.has(a.runId), onclick: () => void cancel(a.runId) },
            cancelling.has(a.runId) ? 'Cancelling…' : 'Cancel',
          ),
        ),
      ),
    );
  }

  function detail(): Node[] {
    const back = h('a', { href: '#/runs', class: 'back-link' }, icon('back'), 'All runs');
    const r = runs?.find((x) => x.attempt_id === detailId);
    if (!r) {
      if (loadError) return [back, errorBox(loadError, 'Could not load the run history.')];
      if (!runs || loadingNow) return [back, loading('Loading the run…')];
      return [back, emptyState('Run not found', 'This attempt is not in the loaded history. It may be filtered out or older than the latest runs; clear the filters and try again.')];
    }
    const st = runStatus(r.status);
    const env = r.envelope;
    return [
      h(
        'div',
        { class: 'run-detail', 'data-testid': 'run-detail', dataset: { attempt: r.attempt_id, status: r.status } },
        back,
        h(
          'header',
          { class: 'run-head' },
          h('div', { class: 'detail-title' }, h('h1', null, r.skill), h('div', { class: 'badges' }, badge(st.label, st.tone))),
          h('p', { class: 'muted' }, st.text),
        ),
        kv(
          [
            ['started', formatDateTime(r.started_at)],
            ['finished', formatDateTime(r.finished_at)],
            ['duration', formatDuration(r.elapsed_ms)],
            ['agent', agentName(r.agent) === r.agent ? r.agent : h('span', null, agentName(r.agent), ' ', h('code', { class: 'mono muted small' }, r.agent))],
            ['outcome', h('span', { 'data-testid': 'run-detail-outcome' }, badge(runOutcome(r).label, runOutcome(r).tone), ' ', runOutcome(r).text)],
            ['recorded rule', r.authorized_by || '—'],
            ['revision', r.revision ? hashChip(r.revision) : '—'],
            ['run', h('code', { class: 'mono small' }, r.run_id)],
            ['attempt', h('code', { class: 'mono small' }, r.attempt_id)],
          ],
          'run-meta',
        ),
        h('div', { class: 'detail-cols' }, h('div', { class: 'col' }, envelopeView(env), stderrView(r)), h('div', { class: 'col' }, journalView(r))),
      ),
    ];
  }

  function envelopeView(env: Envelope | null | undefined): HTMLElement {
    if (!env || typeof env !== 'object') {
      return h('section', { class: 'card', 'data-testid': 'run-envelope' }, h('h2', null, 'Envelope'), h('p', { class: 'muted' }, 'No envelope was recorded.'));
    }
    const cleanup = env.cleanup
      ? h(
          'span',
          null,
          env.cleanup.verified ? badge('Verified', 'ok', 'No process of this run remains') : badge('Not verified', 'danger', 'Some processes may still be running'),
          ' ',
          h('span', { class: 'muted' }, `by ${env.cleanup.mechanism || 'unknown mechanism'}`),
          env.cleanup.signalled ? h('span', { class: 'muted' }, ` · ${env.cleanup.signalled} signalled`) : null,
        )
      : h('span', { class: 'muted' }, 'No process was started');
    // Exactly what the launcher reported it enforced (never inferred here).
    const c = env.confinement;
    const confinement = c
      ? h(
          'span',
          null,
          c.not_enforced.length === 0 && c.enforced.length > 0
            ? badge('Confined', 'ok', `filesystem ${c.filesystem}, network ${c.network}`)
            : badge(c.enforced.length === 0 ? 'Full trust' : 'Partly confined', 'danger', `filesystem ${c.filesystem}, network ${c.network}`),
          ' ',
          h('span', { class: 'muted' }, `enforced: ${c.enforced.join(', ') || 'nothing'}${c.not_enforced.length ? ` · not enforced: ${c.not_enforced.join(', ')}` : ''} · Landlock ABI ${c.abi}`),
        )
      : h('span', { class: 'muted' }, 'Nothing was launched');
    const progress = env.progress
      ? `${env.progress.completed}${env.progress.total !== undefined ? ' of ' + env.progress.total : ''} · ${env.progress.lines} line${env.progress.lines === 1 ? '' : 's'}${env.progress.dropped ? `, ${env.progress.dropped} dropped` : ''}`
      : null;
    const st = runStatus(env.status);
    return h(
      'section',
      { class: 'card', 'data-testid': 'run-envelope' },
      h('header', { class: 'card-head' }, h('h2', null, 'Envelope')),
      kv([
        ['status', badge(st.label, st.tone)],
        ['exit code', env.exitCode === null || env.exitCode === undefined ? '—' : String(env.exitCode)],
        ['signal', env.signal ?? '—'],
        ['cleanup', cleanup],
        ['confinement', confinement],
        ['elapsed', formatDuration(env.elapsedMs)],
        ['runtime', env.runtime ? h('span', null, pathText(env.runtime.path), ' ', h('span', { class: 'muted' }, env.runtime.version)) : null],
        ['stderr', formatBytes(env.stderrBytes)],
        ['progress', progress],
        ['receiver', env.execution_receiver ? h('code', { class: 'mono small' }, env.execution_receiver) : null],
      ]),
      env.errors?.length
        ? h(
            'div',
            null,
            h('h3', { class: 'label' }, `Errors (${env.errors.length})`),
            h('ul', { class: 'issues' }, env.errors.map((i) => h('li', null, h('code', { class: 'code-tag' }, i.code), i.path ? h('code', { class: 'mono muted' }, i.path) : null, h('span', null, i.message)))),
          )
        : null,
      h('h3', { class: 'label' }, 'Output'),
      env.output !== undefined ? codeBlock(prettyJson(env.output), { cls: 'output', label: 'Output JSON' }) : h('p', { class: 'muted small' }, 'No output.'),
    );
  }

  function stderrView(r: RunRecord): HTMLElement {
    return h(
      'section',
      { class: 'card' },
      h('header', { class: 'card-head' }, h('h2', null, 'Stderr'), h('p', { class: 'card-desc' }, 'An excerpt; the script’s diagnostics, never part of the result.')),
      r.stderr ? codeBlock(r.stderr, { cls: 'stderr', label: 'Stderr excerpt' }) : h('p', { class: 'muted small' }, 'The script wrote nothing to stderr.'),
    );
  }

  function journalView(r: RunRecord): HTMLElement {
    let body: Node;
    if (journal.id !== r.attempt_id || (!journal.events && !journal.error)) body = loading('Loading the journal…');
    else if (journal.error) body = errorBox(journal.error, 'Could not load the journal.');
    else if (!journal.events || journal.events.length === 0) body = emptyState('No journal', 'No lifecycle events were stored for this attempt.');
    else {
      const t0 = Date.parse(journal.events[0].at);
      body = h(
        'ol',
        { class: 'timeline' },
        journal.events.map((e) => {
          const d = e.event?.detail;
          const tone = e.type === 'completed' ? runStatus((d as { status?: string } | undefined)?.status ?? '').tone : 'neutral';
          return h(
            'li',
            { class: ['tl-item', `tone-${tone}`], dataset: { type: e.type } },
            h('span', { class: 'tl-dot', 'aria-hidden': 'true' }),
            h(
              'div',
              { class: 'tl-body' },
              h('div', { class: 'tl-head' }, h('strong', null, runEventLabel(e.type)), h('span', { class: 'mono muted small', title: formatDateTime(e.at) }, relativeOffset(Date.parse(e.at) - t0))),
              d !== undefined && d !== null ? detailText(e.type, d) : null,
            ),
          );
        }),
      );
    }
    return h('section', { class: 'card' }, h('header', { class: 'card-head' }, h('h2', null, 'Lifecycle'), h('p', { class: 'card-desc' }, 'From the request to the checked result, as journaled.')), body);
  }

  function detailText(type: string, d: unknown): Node {
    if (type === 'progress' && typeof d === 'object' && d) {
      const p = d as { completed: number; total?: number; message?: string };
      return h('div', { class: 'small' }, `${p.completed}${p.total !== undefined ? ' of ' + p.total : ''}${p.message ? ' — ' + p.message : ''}`);
    }
    if (type === 'completed' && typeof d === 'object' && d && 'status' in d) {
      const s = runStatus(String((d as { status: unknown }).status));
      return h('div', null, badge(s.label, s.tone));
    }
    if (typeof d === 'object' && d && Object.keys(d).length <= 3 && Object.values(d).every((v) => typeof v !== 'object' || v === null)) {
      return h(
        'div',
        { class: 'small muted' },
        Object.entries(d).map(([k, v]) =>
          h('span', { class: 'tl-kv' }, `${k}: `, typeof v === 'string' && ISO_TIME.test(v) ? h('span', { title: v }, formatDateTime(v)) : h('code', { class: 'mono' }, String(v))),
        ),
      );
    }
    return h('details', { class: 'small' }, h('summary', null, 'details'), codeBlock(prettyJson(d), { cls: 'small' }));
  }

  // ---- live updates -----------------------------------------------------

  const offs = [
    onEvent('run', (e) => {
      if (!e) return;
      if (e.type === 'progress') {
        const a = active.find((x) => x.runId === e.runId);
        if (a && e.detail && typeof e.detail === 'object') {
          a.progress = e.detail as ActiveRun['progress'];
          a.state = 'running';
          const node = el.querySelector(`[data-testid="active-run"][data-run-id="${CSS.escape(a.runId)}"] .active-progress`);
          if (node) replace(node, progressBar(a.progress, 'Running…'));
          return;
        }
      }
      if (e.type === 'spawned') {
        const a = active.find((x) => x.runId === e.runId);
        if (a) {
          a.state = 'running';
          render();
        }
      }
      if (e.type === 'completed' || e.type === 'proposed' || e.type === 'consumed' || e.type === 'decided' || !active.some((x) => x.runId === e.runId)) {
        scheduleReload();
      }
      if (detailId && e.attemptId === detailId) void loadJournal(detailId, true);
    }),
    onEvent('proposal', () => scheduleReload()),
    onReconnect(() => void load()),
  ];

  void load();

  return {
    el,
    title: 'Runs',
    route(parts: string[]) {
      const id = parts[0] ? decodeURIComponent(parts[0]) : '';
      if (id === detailId) return;
      detailId = id;
      el.scrollTop = 0;
      render();
      if (id) {
        if (runs && !runs.some((r) => r.attempt_id === id)) {
          // Not in the filtered list: load the unfiltered history.
          filters.status = '';
          filters.skill = '';
          filters.agent = '';
          void load();
        } else void loadJournal(id);
      }
    },
    destroy() {
      offs.forEach((o) => o());
      clearTimeout(reloadTimer);
      clearInterval(tickTimer);
    },
  };
}

// One comparison on screen: the seven dimension verdicts as a strip, the
// first divergence with "Jump to first divergence", both captures replayed
// side by side on one clock (differing rows highlighted on both), the
// per-dimension diff lists, and the trace verdict with its diagnostic;
// every item that names a journal location seeks both sides there.

import { api, ApiError } from '../api/client';
import type { ComparisonView, DiffItem, DimensionName, DimensionRow, TraceDiagnostic } from '../api/types';
import { h, icon, replace } from '../lib/dom';
import { badge, errorBox, exportButton, hashChip } from '../lib/ui';
import { downloadText } from './asciicast';
import { attestationButton } from './library';
import {
  DIMENSION_LABEL,
  describeItem,
  differingRows,
  divergenceText,
  seekTimeOf,
  seekTimes,
  shortLocation,
  statusOf,
  timeOfLocation,
  VERDICT,
} from './compare_model';
import { charRanges, divergenceWords, fieldDiffs, isRow, rowsOf, screenMarks, segments, valueText, type Range } from './compare_diff';
import { SyncClock } from './compare_sync';
import { showTimelineAt } from './controls';
import { formatMs } from './format';
import { DEFAULT_IDLE_CAP_MS, Player, SPEEDS } from './player';
import type { CaptureRecord } from './record';
import { pauseIcon, playIcon } from './icons';

const SIDES = ['left', 'right'] as const;
type SideName = (typeof SIDES)[number];

/** Plain names of the two sides; the spec's terms stay as secondary text. */
export const SIDE_LABEL: Record<SideName, { label: string; term: string }> = {
  left: { label: 'Reference run', term: 'authority' },
  right: { label: 'Checked run', term: 'reconstruction' },
};

/** Differing items fetched per page. */
const PAGE = 200;

/** text with every control character shown as a visible symbol, one
 * code point for one, so character ranges stay aligned. */
function visible(text: string): string {
  return Array.from(text, (c) => {
    const n = c.codePointAt(0)!;
    if (n < 0x20) return String.fromCodePoint(0x2400 + n);
    if (n === 0x7f) return '\u2421';
    if (n >= 0x80 && n < 0xa0) return '\ufffd';
    return c;
  }).join('');
}

/** Text with its marked ranges as <mark> elements (a background behind
 * the characters, never over them). */
function markedText(text: string, ranges: readonly Range[]): HTMLElement {
  return h('code', { class: 'mono cmp-chars' }, segments(visible(text), ranges).map((p) => (p.marked ? h('mark', { class: 'cmp-mark' }, p.text) : p.text)));
}

/** Fired on the panel element after every seek made through it, once
 * both screens are drawn and highlighted: detail {left, right, rows}. */
export const COMPARE_SEEKED = 'gatehouse:compare-seeked';

export class ComparisonPanel {
  readonly el: HTMLElement;
  private readonly view: ComparisonView;
  private readonly records: Record<SideName, CaptureRecord | null>;
  private readonly players: Partial<Record<SideName, Player>> = {};
  private readonly clock = new SyncClock();
  private readonly offs: (() => void)[] = [];
  private highlight = true;
  private dim: DimensionName;
  /** The page shown per dimension, when another than the view's first. */
  private readonly pages = new Map<DimensionName, DimensionRow>();
  private pageNote: HTMLElement = h('span');
  private selectedItem: string | null = null;
  private readonly sideTime: Partial<Record<SideName, HTMLElement>> = {};
  private readonly sideBox: Partial<Record<SideName, HTMLElement>> = {};
  private diffHost = h('div', { class: 'cmp-diffs-body' });
  private rowsNote = h('span', { class: 'cmp-rows-note small', 'aria-live': 'polite', 'data-testid': 'rows-note' });
  private timeEl = h('span', { class: 'ev-time mono', 'data-testid': 'compare-time' });
  private playBtn: HTMLButtonElement;
  private fill = h('div', { class: 'ev-fill' });
  private dot = h('div', { class: 'ev-head-dot' });
  private scrub: HTMLElement;
  private marks = h('div', { class: 'ev-marks' });

  constructor(view: ComparisonView) {
    this.view = view;
    this.records = {
      left: view.left.available ? (view.left.record as CaptureRecord) : null,
      right: view.right.available ? (view.right.record as CaptureRecord) : null,
    };
    const fd = view.result.first_divergence;
    const firstChanged = view.dimensions.find((d) => d.total > 0)?.name;
    this.dim = fd.status === 'found' ? fd.dimension : (firstChanged ?? 'terminal');
    this.playBtn = h('button', { type: 'button', class: 'btn ev-play', 'data-testid': 'compare-play', 'aria-label': 'Play both (space)', title: 'Play both (space)', onclick: () => this.clock.toggle() }, playIcon());
    this.scrub = h('div', { class: 'ev-scrub', role: 'slider', tabindex: '0', 'aria-label': 'Shared timeline', 'aria-valuemin': '0', 'data-testid': 'compare-timeline' }, h('div', { class: 'ev-track' }, this.fill), this.marks, this.dot);
    this.el = h('div', { class: 'cmp-result', 'data-testid': 'comparison' });
    this.build();
  }

  /** Mounts the players (the panel must be in the document) and shows
   * both sides at time 0. */
  async start(): Promise<void> {
    const loads: Promise<void>[] = [];
    for (const s of SIDES) {
      const rec = this.records[s];
      const box = this.sideBox[s];
      if (!rec || !box) continue;
      const p = new Player({ idleCapMs: DEFAULT_IDLE_CAP_MS, fontSize: 12 });
      p.mount(box);
      loads.push(p.load(rec));
      this.players[s] = p;
    }
    await Promise.all(loads);
    const ps = SIDES.map((s) => this.players[s]).filter((p): p is Player => !!p);
    this.clock.attach(ps);
    this.offs.push(
      this.clock.onTime((t) => this.showTime(t)),
      this.clock.onState((st) => {
        replace(this.playBtn, st === 'playing' ? pauseIcon() : playIcon());
        this.playBtn.setAttribute('aria-label', st === 'playing' ? 'Pause both (space)' : 'Play both (space)');
      }),
      this.clock.onFrame(() => this.afterFrame()),
    );
    this.placeMarks();
    // Open at the first divergence: both sides there, rows and characters marked.
    if (this.view.result.first_divergence.status === 'found' && this.records.left && this.records.right) await this.jumpToDivergence();
    else await this.seek(0);
  }

  destroy(): void {
    this.offs.forEach((f) => f());
    this.clock.dispose();
    for (const s of SIDES) this.players[s]?.dispose();
  }

  /** Seeks both sides (each may get its own time) and highlights the rows
   * their screens differ in. */
  async seek(ms: number, perSide?: { left: number; right: number }): Promise<void> {
    await this.clock.seek(ms, perSide ? [perSide.left, perSide.right] : undefined);
    const rows = this.afterFrame();
    this.el.dispatchEvent(new CustomEvent(COMPARE_SEEKED, { bubbles: true, detail: { left: this.players.left?.time, right: this.players.right?.time, rows } }));
  }

  /** Seeks both sides to the first divergence. */
  async jumpToDivergence(): Promise<void> {
    const fd = this.view.result.first_divergence;
    if (fd.status !== 'found') return;
    this.clock.pause();
    this.dim = fd.dimension;
    this.selectedItem = String(fd.index);
    this.renderDiffs();
    const t = seekTimes(fd, this.records.left, this.records.right);
    await this.seek(Math.min(t.left, t.right), t);
  }

  /** Keyboard shortcuts of the compare view. */
  key(e: KeyboardEvent): boolean {
    if (e.key === ' ') this.clock.toggle();
    else if (e.key === 'ArrowRight') void this.seek(this.clock.time + 500);
    else if (e.key === 'ArrowLeft') void this.seek(this.clock.time - 500);
    else if (e.key === 'd' || e.key === 'D') void this.jumpToDivergence();
    else return false;
    return true;
  }

  // ---- building ---------------------------------------------------------

  private build(): void {
    const v = this.view;
    const r = v.result;
    const st = statusOf(r.status);
    const head = h(
      'header',
      { class: 'cmp-summary' },
      h(
        'div',
        { class: 'cmp-summary-main' },
        h('h2', null, 'Comparison'),
        h('span', { 'data-testid': 'overall-status', dataset: { status: r.status } }, badge(st.label, st.tone, st.text)),
        h('span', { 'data-testid': 'compare-mode', dataset: { mode: r.mode ?? 'exact' } }, badge(r.mode === 'behavior' ? 'behavior mode' : 'exact mode', 'info', r.mode === 'behavior' ? 'Did the program behave differently? Output chunking, times, sample counts and how connections interleave are ignored.' : 'Did the captures record the same observations? Item by item, times included.')),
        v.result.trace ? badge('with trace spec', 'info') : null,
        v.saved && v.evidence_id ? h('span', { class: 'cmp-id' }, h('span', { class: 'muted small' }, 'saved as'), hashChip(v.evidence_id, { what: 'comparison evidence id', testid: 'comparison-id' })) : null,
        v.saved && v.evidence_id ? attestationButton(v.evidence_id) : null,
        v.recomputed === 'match' ? badge('re-checked: same result', 'ok', 'The two captures were compared again just now and gave exactly this result.') : null,
        v.recomputed === 'mismatch' ? badge('re-checked: DIFFERENT result', 'danger', 'Comparing the two captures again gave another result than this Evidence records.') : null,
        v.recomputed === 'unavailable' ? badge('captures not in library', 'warn', 'The linked captures are not in this library, so they cannot be replayed or re-checked.') : null,
      ),
    );
    const strip = h('ul', { class: 'cmp-strip', 'aria-label': 'Dimension verdicts', 'data-testid': 'dim-strip' }, v.dimensions.map((d) => h('li', null, this.dimTile(d))));
    const fd = r.first_divergence;
    const jump = h(
      'button',
      { type: 'button', class: 'btn primary', 'data-testid': 'jump-divergence', disabled: fd.status !== 'found' || !this.records.left || !this.records.right, title: 'Seek both sides to the first divergence (D)', onclick: () => void this.jumpToDivergence() },
      'Jump to first divergence',
    );
    const divergence = h(
      'div',
      { class: ['cmp-divergence', `is-${fd.status}`], 'data-testid': 'divergence' },
      icon(fd.status === 'none' ? 'check' : 'warn'),
      h(
        'div',
        { class: 'cmp-divergence-text' },
        h('strong', null, 'First divergence'),
        h('span', { class: 'cmp-divergence-words', 'data-testid': 'divergence-words' }, divergenceWords(fd, this.view.divergence_fields)),
        h('span', { class: 'muted small', 'data-testid': 'divergence-text' }, divergenceText(fd, formatMs)),
      ),
      jump,
    );
    const sides = h('div', { class: 'cmp-players' }, SIDES.map((s) => this.sideColumn(s)));
    const controls = this.controls();
    const lower = h('div', { class: 'cmp-lower' }, this.diffCard(), this.traceCard());
    const finals = this.finalScreens();
    const lim = r.limitations.length
      ? h('details', { class: 'cmp-limits' }, h('summary', null, `Limitations (${r.limitations.length})`), h('ul', { class: 'ev-list' }, r.limitations.map((l) => h('li', { class: 'small' }, l))))
      : null;
    replace(this.el, head, strip, divergence, h('section', { class: 'cmp-replay', 'aria-label': 'Synchronized replay' }, sides, controls), finals, lower, lim);
  }

  private dimTile(d: DimensionRow): HTMLElement {
    const st = statusOf(d.status);
    const count =
      d.total > 0
        ? `${d.total} differ${d.total === 1 ? 's' : ''}`
        : d.left_count + d.right_count === 0
          ? 'nothing observed'
          : d.left_count === d.right_count
            ? `${d.left_count} each`
            : `${d.left_count} / ${d.right_count}`;
    return h(
      'button',
      {
        type: 'button',
        class: ['cmp-dim', `tone-${st.tone}`, this.dim === d.name ? 'selected' : ''],
        'data-testid': `dim-${d.name}`,
        dataset: { status: d.status, dim: d.name },
        title: `${DIMENSION_LABEL[d.name]}: ${st.label}. ${st.text}`,
        'aria-label': `${DIMENSION_LABEL[d.name]}: ${st.label}, ${count}`,
        onclick: () => {
          this.dim = d.name;
          this.selectedItem = null;
          this.el.querySelectorAll('.cmp-dim').forEach((b) => b.classList.toggle('selected', (b as HTMLElement).dataset.dim === d.name));
          this.renderDiffs();
        },
      },
      h('span', { class: 'cmp-dim-name' }, DIMENSION_LABEL[d.name]),
      h('span', { class: 'cmp-dim-status' }, h('span', { class: 'cmp-dot', 'aria-hidden': 'true' }), st.label),
      h('span', { class: 'cmp-dim-count' }, count),
    );
  }

  private sideColumn(s: SideName): HTMLElement {
    const side = this.view[s];
    const box = h('div', { class: 'ev-screen cmp-screen', 'data-testid': `screen-${s}` });
    this.sideBox[s] = box;
    const time = h('span', { class: 'mono small', 'data-testid': `time-${s}` }, formatMs(0));
    this.sideTime[s] = time;
    const exportBtn = exportButton({
      label: 'Export .cast',
      busy: 'Exporting…',
      done: 'Exported',
      testid: `export-${s}`,
      disabled: !side.available,
      title: 'Download this capture as an asciicast v2 file (sensitive input only as its placeholder)',
      run: async () => {
        const r = await api.ExportAsciicast({ id: side.evidence_id });
        downloadText(r.name, r.text);
      },
    });
    return h(
      'div',
      { class: ['cmp-side', `cmp-${s}`], 'data-testid': `side-${s}` },
      h(
        'header',
        { class: 'cmp-side-head' },
        h(
          'div',
          { class: 'cmp-side-title' },
          h('span', { class: 'cmp-side-tag', title: `${SIDE_LABEL[s].label} (${s}, the ${SIDE_LABEL[s].term})` }, SIDE_LABEL[s].label),
          hashChip(side.evidence_id, { what: 'evidence id', len: 10 }),
          side.available ? h('a', { href: `#/evidence/${side.evidence_id}`, class: 'small', title: 'Open this capture with its panels in the Evidence view' }, 'Details') : null,
        ),
        exportBtn,
      ),
      h('code', { class: 'mono cmp-cmd', title: side.command }, side.command || '—'),
      side.available
        ? box
        : h('div', { class: 'alert tone-warn cmp-missing' }, icon('warn'), h('div', null, h('strong', null, 'Not in this library. '), side.problem ?? 'Import this capture to replay it.')),
      h('footer', { class: 'cmp-side-foot muted small' }, 'at ', time, side.started_at ? ` · captured ${side.started_at.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}` : '', h('span', { class: 'cmp-side-term' }, ` · ${s} side, the ${SIDE_LABEL[s].term}`)),
    );
  }

  private controls(): HTMLElement {
    let dragging = false;
    const at = (e: PointerEvent) => {
      const r = this.scrub.getBoundingClientRect();
      return Math.max(0, Math.min(1, (e.clientX - r.left) / Math.max(1, r.width))) * this.clock.duration;
    };
    this.scrub.addEventListener('pointerdown', (e) => {
      if ((e.target as HTMLElement).classList.contains('ev-mark')) return;
      dragging = true;
      this.scrub.setPointerCapture(e.pointerId);
      void this.seek(at(e));
    });
    this.scrub.addEventListener('pointermove', (e) => {
      if (dragging) void this.seek(at(e));
    });
    this.scrub.addEventListener('pointerup', () => (dragging = false));
    this.scrub.addEventListener('pointercancel', () => (dragging = false));
    this.scrub.addEventListener('keydown', (e) => {
      if (e.key === 'Home') void this.seek(0);
      else if (e.key === 'End') void this.seek(this.clock.duration);
      else return;
      e.preventDefault();
    });
    const speed = h(
      'select',
      { class: 'input small', 'aria-label': 'Playback speed', 'data-testid': 'compare-speed', onchange: (e: Event) => this.clock.setSpeed(Number((e.target as HTMLSelectElement).value)) },
      SPEEDS.map((x) => h('option', { value: String(x), selected: x === 1 }, `${x}×`)),
    );
    const hl = h('input', {
      type: 'checkbox',
      checked: true,
      'data-testid': 'highlight-toggle',
      onchange: (e: Event) => {
        this.highlight = (e.target as HTMLInputElement).checked;
        this.afterFrame();
      },
    });
    return h(
      'div',
      { class: 'ev-controls cmp-controls' },
      h(
        'div',
        { class: 'ev-controls-row' },
        this.playBtn,
        this.timeEl,
        this.scrub,
        h('label', { class: 'ev-ctl' }, h('span', { class: 'muted small' }, 'Speed'), speed),
      ),
      h(
        'div',
        { class: 'ev-legend muted small' },
        h('label', { class: 'check-row small' }, hl, 'Highlight rows that differ'),
        this.rowsNote,
        h('span', { class: 'spacer' }),
        h('span', { class: 'ev-keys' }, h('kbd', null, 'Space'), ' play/pause · ', h('kbd', null, '←'), h('kbd', null, '→'), ' ±0.5 s · ', h('kbd', null, 'D'), ' first divergence'),
      ),
    );
  }

  /** Divergence and diff-item ticks on the shared timeline. */
  private placeMarks(): void {
    const dur = Math.max(1, this.clock.duration);
    this.scrub.setAttribute('aria-valuemax', String(this.clock.duration));
    const fd = this.view.result.first_divergence;
    const ticks: HTMLElement[] = [];
    const row = this.view.dimensions.find((d) => d.name === 'terminal');
    for (const it of row?.items.slice(0, 50) ?? []) {
      const t = it.left_at_ms ?? it.right_at_ms;
      if (t === null) continue;
      const m = h('button', { type: 'button', class: 'ev-mark cmp-mark-diff', tabindex: '-1', title: `${formatMs(t)} · terminal item ${it.index} differs`, onclick: (e: Event) => (e.stopPropagation(), void this.seekItem('terminal', it)) });
      m.style.left = `${(t / dur) * 100}%`;
      ticks.push(m);
    }
    if (fd.status === 'found') {
      const t = fd.left_at_ms ?? fd.right_at_ms ?? this.clock.duration;
      const m = h('button', { type: 'button', class: 'ev-mark cmp-mark-first', tabindex: '-1', title: `${formatMs(t)} · first divergence`, 'aria-label': 'First divergence', onclick: (e: Event) => (e.stopPropagation(), void this.jumpToDivergence()) });
      m.style.left = `${(t / dur) * 100}%`;
      ticks.push(m);
    }
    replace(this.marks, ticks);
  }

  private showTime(t: number): void {
    showTimelineAt({ time: this.timeEl, fill: this.fill, head: this.dot, scrub: this.scrub }, t, this.clock.duration);
  }

  /** After both screens changed: side times and differing rows. */
  private afterFrame(): number[] {
    const l = this.players.left;
    const r = this.players.right;
    for (const s of SIDES) {
      const p = this.players[s];
      if (!p) continue;
      this.sideTime[s]!.textContent = formatMs(p.time);
      this.sideBox[s]!.dataset.time = String(Math.round(p.time));
    }
    if (!l || !r) return [];
    const ll = l.screenLines();
    const rl = r.screenLines();
    const rows = differingRows(ll, rl);
    const shown = this.highlight ? rows : [];
    l.highlightRows(shown);
    r.highlightRows(shown);
    const marks = this.highlight ? screenMarks(ll, rl) : { left: new Map(), right: new Map() };
    l.markCharacters(marks.left);
    r.markCharacters(marks.right);
    this.rowsNote.textContent = rows.length === 0 ? 'Screens are identical here.' : `${rows.length === 1 ? '1 row differs' : `${rows.length} rows differ`} here (row ${rows.slice(0, 6).map((x) => x + 1).join(', ')}${rows.length > 6 ? ', …' : ''}).`;
    this.rowsNote.classList.toggle('is-diff', rows.length > 0);
    return rows;
  }

  // ---- diff lists ----------------------------------------------------------

  private diffCard(): HTMLElement {
    this.renderDiffs();
    return h(
      'section',
      { class: 'card cmp-diffs', 'aria-labelledby': 'cmp-diffs-h', 'data-testid': 'diff-list' },
      h('header', { class: 'card-head' }, h('div', null, h('h2', { id: 'cmp-diffs-h' }, 'Differences by dimension'), h('p', { class: 'card-desc' }, this.view.result.mode === 'behavior' ? 'What differs under behaviour mode (times and chunking ignored): the terminal stream and final screen, the other lists item by item. Click one to show both sides there.' : 'Items compared index by index, times included (RFC 8785 equality). Click one to show both sides at its time.'))),
      this.diffHost,
    );
  }

  private renderDiffs(): void {
    const dims = this.view.dimensions;
    const tabs = h(
      'div',
      { class: 'tabs cmp-tabs', role: 'tablist' },
      dims.map((d) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            class: ['tab', d.name === this.dim ? 'active' : ''],
            'aria-selected': d.name === this.dim ? 'true' : 'false',
            'data-testid': `diff-tab-${d.name}`,
            onclick: () => {
              this.dim = d.name;
              this.selectedItem = null;
              this.el.querySelectorAll('.cmp-dim').forEach((b) => b.classList.toggle('selected', (b as HTMLElement).dataset.dim === d.name));
              this.renderDiffs();
            },
          },
          DIMENSION_LABEL[d.name],
          d.total ? h('span', { class: 'tab-count' }, String(d.total)) : null,
        ),
      ),
    );
    const row = this.pages.get(this.dim) ?? dims.find((d) => d.name === this.dim);
    let body: HTMLElement;
    if (!row) body = h('p', { class: 'muted' }, 'No such dimension.');
    else if (!this.records.left || !this.records.right) body = h('p', { class: 'muted' }, 'Differences are listed only when both captures are in this library.');
    else if (row.total === 0) {
      const st = statusOf(row.status);
      body = h('p', { class: 'cmp-empty muted' }, row.status === 'unchanged' ? `No differences: ${row.left_count} item${row.left_count === 1 ? '' : 's'} on each side are equal.` : `${st.label}: ${st.text}`);
    } else {
      const fd = this.view.result.first_divergence;
      body = h(
        'div',
        null,
        h(
          'ol',
          { class: 'cmp-items' },
          row.items.map((it) => {
            const first = fd.status === 'found' && fd.dimension === row.name && fd.index === it.index;
            return h(
              'li',
              null,
              h(
                'button',
                {
                  type: 'button',
                  class: ['cmp-item', first ? 'is-first' : '', this.selectedItem === String(it.index) ? 'selected' : ''],
                  'data-testid': 'diff-item',
                  dataset: { index: String(it.index) },
                  onclick: () => void this.seekItem(row.name, it),
                },
                h('span', { class: 'cmp-item-head' }, h('strong', null, `#${it.index + 1}`), first ? badge('first divergence', 'danger') : null, h('span', { class: 'muted small' }, this.itemWhere(it))),
                itemBody(it.left, it.right, it.differing_fields),
              ),
            );
          }),
        ),
        this.pager(row),
      );
    }
    replace(this.diffHost, tabs, h('div', { class: 'tab-panel', role: 'tabpanel' }, body));
  }

  /** Page controls: which items of the total are shown, and the pages
   * before and after (fetched from the backend, never cut silently). */
  private pager(row: DimensionRow): HTMLElement | null {
    const offset = row.offset ?? 0;
    if (row.total <= row.items.length && offset === 0) return null;
    const go = async (to: number, btn: HTMLButtonElement) => {
      btn.disabled = true;
      this.pageNote.textContent = 'Loading…';
      try {
        const page = await api.CompareDiffPage({ left: this.view.left.evidence_id, right: this.view.right.evidence_id, mode: this.view.result.mode ?? 'exact', dimension: row.name, offset: to, limit: PAGE });
        this.pages.set(row.name, { ...page, offset: page.offset ?? to });
        this.renderDiffs();
      } catch (e) {
        this.pageNote.textContent = e instanceof Error ? `Could not load the page: ${e.message}` : 'Could not load the page.';
        btn.disabled = false;
      }
    };
    const last = Math.max(0, Math.floor((row.total - 1) / PAGE) * PAGE);
    const prev = h('button', { type: 'button', class: 'btn small', 'data-testid': 'diff-prev', disabled: offset === 0, onclick: (e: Event) => void go(Math.max(0, offset - PAGE), e.currentTarget as HTMLButtonElement) }, 'Previous');
    const next = h('button', { type: 'button', class: 'btn small', 'data-testid': 'diff-next', disabled: offset + row.items.length >= row.total, onclick: (e: Event) => void go(offset + PAGE, e.currentTarget as HTMLButtonElement) }, 'Next');
    const end = h('button', { type: 'button', class: 'btn small ghost', 'data-testid': 'diff-last', disabled: offset >= last, onclick: (e: Event) => void go(last, e.currentTarget as HTMLButtonElement) }, 'Last');
    this.pageNote = h('span', { class: 'small muted', 'aria-live': 'polite' });
    return h(
      'div',
      { class: 'cmp-pager', 'data-testid': 'diff-pager' },
      prev,
      h('span', { class: 'small', 'data-testid': 'diff-range' }, `Items ${offset + 1}–${offset + row.items.length} of ${row.total}`),
      next,
      end,
      this.pageNote,
    );
  }

  /** The two final screens side by side, differing rows highlighted and
   * their differing characters marked. */
  private finalScreens(): HTMLElement | null {
    const l = this.records.left?.rendered_frames?.at(-1);
    const r = this.records.right?.rendered_frames?.at(-1);
    if (!l && !r) return null;
    const ll = l?.lines ?? [];
    const rl = r?.lines ?? [];
    const marks = screenMarks(ll, rl);
    const rows = differingRows(ll, rl);
    const screen = (s: SideName, lines: readonly string[], m: Map<number, Range[]>) =>
      h(
        'div',
        { class: 'cmp-final-side' },
        h('div', { class: 'small muted' }, SIDE_LABEL[s].label),
        h(
          'pre',
          { class: 'cmp-final-screen mono', 'data-testid': `final-${s}` },
          lines.map((line, i) => h('div', { class: ['cmp-final-row', rows.includes(i) ? 'is-diff' : ''], dataset: { row: String(i) } }, h('span', { class: 'cmp-final-no' }, String(i + 1).padStart(2, ' ')), markedText(line.trimEnd(), m.get(i) ?? []))),
        ),
      );
    return h(
      'section',
      { class: 'card cmp-finals', 'aria-label': 'Final screens', 'data-testid': 'final-screens' },
      h('header', { class: 'card-head' }, h('div', null, h('h2', null, 'Final screens'), h('p', { class: 'card-desc' }, rows.length ? `${rows.length === 1 ? '1 row differs' : `${rows.length} rows differ`} (row ${rows.slice(0, 8).map((x) => x + 1).join(', ')}${rows.length > 8 ? ', …' : ''}).` : 'The last screens of both runs are identical.'))),
      h('div', { class: 'cmp-final-grid' }, screen('left', ll, marks.left), screen('right', rl, marks.right)),
    );
  }

  private itemWhere(it: DiffItem): string {
    const side = (at: number | null, loc: string | null) => (loc ? `${shortLocation(loc)}${at !== null ? ' @ ' + formatMs(at) : ''}` : 'none');
    return `left ${side(it.left_at_ms, it.left_location)} · right ${side(it.right_at_ms, it.right_location)}`;
  }

  private async seekItem(dim: DimensionName, it: DiffItem): Promise<void> {
    this.clock.pause();
    this.dim = dim;
    this.selectedItem = String(it.index);
    this.renderDiffs();
    const t = seekTimes(it, this.records.left, this.records.right);
    await this.seek(Math.min(t.left, t.right), t);
  }

  // ---- trace ----------------------------------------------------------------

  private traceCard(): HTMLElement {
    const tr = this.view.result.trace;
    if (!tr) {
      return h(
        'section',
        { class: 'card cmp-trace', 'data-testid': 'trace-card' },
        h('header', { class: 'card-head' }, h('div', null, h('h2', null, 'Trace spec'), h('p', { class: 'card-desc' }, 'No trace spec was checked. Add one above (paste or load a file) to test both captures against a partial order or a set of finite traces.'))),
      );
    }
    const v = VERDICT[tr.verdict] ?? { label: tr.verdict, tone: 'neutral' as const, text: '' };
    const sideRow = (s: SideName) => {
      const ts = tr[s];
      const tone = ts.status === 'pass' ? 'ok' : ts.status === 'fail' ? 'danger' : 'neutral';
      return h(
        'div',
        { class: 'cmp-trace-side' },
        h('span', { class: 'cmp-side-tag' }, s === 'left' ? 'Left' : 'Right'),
        badge(ts.status, tone),
        ts.matched_variant ? h('span', { class: 'small' }, 'variant ', h('code', { class: 'mono' }, ts.matched_variant)) : null,
        ts.trace.length
          ? h(
              'details',
              { class: 'cmp-trace-steps' },
              h('summary', { class: 'small' }, `${ts.trace.length} matched event${ts.trace.length === 1 ? '' : 's'}`),
              h('ol', { class: 'ev-list' }, ts.trace.map((st) => h('li', { class: 'small' }, h('code', { class: 'mono' }, st.event_id), ' at ', this.locationButton(s, st.location)))),
            )
          : null,
      );
    };
    return h(
      'section',
      { class: 'card cmp-trace', 'data-testid': 'trace-card' },
      h(
        'header',
        { class: 'card-head' },
        h('div', null, h('h2', null, 'Trace spec'), h('p', { class: 'card-desc' }, 'Checked against each capture’s event journal order; timestamps are data, not causality.')),
        h('span', { 'data-testid': 'trace-verdict', dataset: { verdict: tr.verdict } }, badge(v.label, v.tone, v.text)),
      ),
      h('p', { class: 'small muted' }, v.text),
      sideRow('left'),
      sideRow('right'),
      tr.diagnostic ? this.diagnostic(tr.diagnostic) : null,
    );
  }

  private diagnostic(d: TraceDiagnostic): HTMLElement {
    const side: SideName = d.side === 'right' ? 'right' : 'left';
    return h(
      'div',
      { class: 'cmp-diag', 'data-testid': 'trace-diagnostic' },
      h('div', { class: 'cmp-diag-head' }, icon('warn'), h('strong', null, `${d.kind} · ${d.side}`)),
      h('p', null, d.message),
      d.event_ids.length ? h('p', { class: 'small' }, 'Events: ', d.event_ids.map((e, i) => [i ? ', ' : '', h('code', { class: 'mono' }, e)])) : null,
      d.locations.length ? h('p', { class: 'small cmp-diag-locs' }, 'Journal locations: ', d.locations.map((l, i) => [i ? ' ' : '', this.locationButton(d.side === 'both' ? 'left' : side, l, d.side === 'both')])) : null,
    );
  }

  /** A journal location that seeks there when clicked: the named side to
   * the item's time, the other side to the same time. */
  private locationButton(side: SideName, loc: string, both = false): HTMLElement {
    return h(
      'button',
      {
        type: 'button',
        class: 'cmp-loc mono',
        'data-testid': 'trace-location',
        title: `Show ${both ? 'both sides' : `the ${side} side`} at this journal location`,
        onclick: async () => {
          this.clock.pause();
          const t = seekTimeOf(this.records[side], loc, null);
          const other: SideName = side === 'left' ? 'right' : 'left';
          const ot = both ? (timeOfLocation(this.records[other], loc) ?? t) : t;
          await this.seek(t, side === 'left' ? { left: t, right: ot } : { left: ot, right: t });
        },
      },
      shortLocation(loc),
    );
  }
}

/** Both sides of a differing item: screen rows with their differing
 * characters marked, JSON objects field by field (differing fields
 * highlighted, strings marked character by character), else one line. */
function itemBody(left: unknown, right: unknown, differing?: string[]): HTMLElement {
  const side = (tag: string, content: HTMLElement | string) => h('span', { class: 'cmp-item-val' }, h('span', { class: 'cmp-lr' }, tag), content);
  if (isRow(left) || isRow(right)) {
    const one = (v: unknown) => (isRow(v) ? h('span', null, h('span', { class: 'muted small' }, `row ${v.row + 1} `), markedText(v.text, v.ranges ?? [])) : h('span', { class: 'muted small' }, '(no row)'));
    return h('span', { class: 'cmp-item-body' }, side('L', one(left)), side('R', one(right)));
  }
  if (left && typeof left === 'object' && 'offset' in left) {
    const one = (v: unknown) => {
      if (!v || typeof v !== 'object') return h('span', { class: 'muted small' }, '(no output)');
      const o = v as { offset: number; data?: string; rows?: unknown };
      const rows = rowsOf(o);
      return h(
        'span',
        { class: 'cmp-stream' },
        h('span', { class: 'muted small' }, `byte ${o.offset} · chunk `), h('code', { class: 'mono' }, valueText(o.data ?? '', 80)),
        rows.map((r) => h('span', { class: 'cmp-stream-row' }, h('span', { class: 'muted small' }, `row ${r.row + 1} `), markedText(r.text, r.ranges ?? []))),
      );
    };
    return h('span', { class: 'cmp-item-body' }, side('L', one(left)), side('R', one(right)));
  }
  const fields = fieldDiffs(left, right, differing);
  if (fields && left && right) {
    return h(
      'table',
      { class: 'cmp-fields' },
      h('thead', null, h('tr', null, h('th', null, 'field'), h('th', null, 'L'), h('th', null, 'R'))),
      h(
        'tbody',
        null,
        fields.map((f) => {
          let lv: HTMLElement | string = valueText(f.left);
          let rv: HTMLElement | string = valueText(f.right);
          if (f.differs && typeof f.left === 'string' && typeof f.right === 'string') {
            const cr = charRanges(f.left, f.right);
            lv = markedText(f.left, cr.left);
            rv = markedText(f.right, cr.right);
          }
          return h('tr', { class: f.differs ? 'is-diff' : '', dataset: { field: f.key } }, h('td', { class: 'mono' }, f.key), h('td', { class: 'mono' }, lv), h('td', { class: 'mono' }, rv));
        }),
      ),
    );
  }
  return h('span', { class: 'cmp-item-body' }, side('L', h('code', { class: 'mono' }, describeItem(left, right))), side('R', h('code', { class: 'mono' }, describeItem(right, left))));
}

/** The issues of a structured error's details: a list of {path, code,
 * message, line?, side?} or {issues: [...]}. */
export function detailIssues(details: unknown): { path: string; code: string; message: string; line?: number; side?: string }[] {
  const list = Array.isArray(details) ? details : details && typeof details === 'object' && Array.isArray((details as { issues?: unknown }).issues) ? (details as { issues: unknown[] }).issues : [];
  return list
    .filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null)
    .map((x) => ({
      path: String(x.path ?? ''),
      code: String(x.code ?? ''),
      message: String(x.message ?? ''),
      line: typeof x.line === 'number' ? x.line : undefined,
      side: typeof x.side === 'string' && x.side ? x.side : undefined,
    }));
}

/** A failed call with every issue and its path (and line, for files). */
export function issuesBox(err: unknown, prefix: string, testid: string): HTMLElement {
  const issues = err instanceof ApiError ? detailIssues(err.details) : [];
  const remediation = err instanceof ApiError && err.details && typeof err.details === 'object' ? (err.details as { remediation?: unknown }).remediation : undefined;
  return h(
    'div',
    { class: 'cmp-error', 'data-testid': testid },
    errorBox(err, prefix),
    issues.length
      ? h(
          'ul',
          { class: 'ev-issues' },
          issues.slice(0, 50).map((is) =>
            h(
              'li',
              null,
              is.line !== undefined && is.line > 0 ? h('span', { class: 'code-tag' }, `line ${is.line}`) : null,
              is.side ? h('span', { class: 'code-tag' }, is.side) : null,
              ' ',
              h('code', { class: 'mono ev-issue-path' }, is.path),
              ' ',
              h('span', { class: 'code-tag' }, is.code),
              ' ',
              h('span', { class: 'small' }, is.message),
            ),
          ),
        )
      : null,
    typeof remediation === 'string' && remediation ? h('p', { class: 'small muted' }, remediation) : null,
  );
}

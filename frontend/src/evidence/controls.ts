// The replay controls under a Player: play/pause, the time, the
// scrubbable timeline with its markers (click or drag to seek; hover shows
// the time), speed and idle-time cap, and the legend with the keyboard
// shortcuts (handled by the page, see detail.ts).

import { h, replace } from '../lib/dom';
import { formatMs } from './format';
import { DEFAULT_IDLE_CAP_MS, SPEEDS, type Player, type PlayerState } from './player';
import type { MarkerKind } from './timeline';
import { pauseIcon, playIcon } from './icons';

const IDLE_CAPS: [number | null, string][] = [
  [null, 'No cap'],
  [500, '0.5 s'],
  [1000, '1 s'],
  [DEFAULT_IDLE_CAP_MS, '2 s'],
  [5000, '5 s'],
];

export const MARKER_LABEL: Record<MarkerKind, string> = {
  input: 'Input',
  resize: 'Resize',
  signal: 'Signal',
  stdin_close: 'Stdin closed',
  checkpoint: 'Checkpoint',
  shim: 'Shim call',
  protocol: 'Protocol',
  exit: 'Exit',
  settlement: 'Settlement',
};

/** Controls bound to one Player; seek is how they ask for a new time. */
export class ReplayControls {
  readonly el: HTMLElement;
  private readonly player: Player;
  private readonly scrub: HTMLElement;
  private readonly headEl: HTMLElement;
  private readonly fillEl: HTMLElement;
  private readonly timeEl: HTMLElement;
  private readonly playBtn: HTMLButtonElement;
  private readonly offs: (() => void)[] = [];

  constructor(player: Player, seek: (ms: number) => void) {
    this.player = player;
    const tl = player.timeline;
    this.playBtn = h('button', { type: 'button', class: 'btn ev-play', 'data-testid': 'player-play', 'aria-label': 'Play (space)', title: 'Play (space)', onclick: () => player.toggle() }, playIcon());
    this.timeEl = h('span', { class: 'ev-time mono', 'data-testid': 'player-time', 'aria-live': 'off' }, `${formatMs(0)} / ${formatMs(player.duration)}`);
    this.fillEl = h('div', { class: 'ev-fill' });
    this.headEl = h('div', { class: 'ev-head-dot' });
    const marks = h('div', { class: 'ev-marks' });
    const hover = h('div', { class: 'ev-hover mono', hidden: true, 'aria-hidden': 'true' });
    const scrub = h(
      'div',
      {
        class: 'ev-scrub',
        role: 'slider',
        tabindex: '0',
        'aria-label': 'Timeline',
        'aria-valuemin': '0',
        'aria-valuenow': '0',
        'data-testid': 'player-timeline',
      },
      h('div', { class: 'ev-track' }, this.fillEl),
      marks,
      this.headEl,
      hover,
    );
    this.scrub = scrub;
    // The timeline is built when the record loads; markers are placed by
    // percentage, so they need no layout.
    const legend = h('span', { class: 'ev-legend-kinds' });
    const placeMarkers = () => {
      const t = player.timeline;
      replace(
        legend,
        [...new Set((t?.markers ?? []).map((m) => m.kind))].map((k) => h('span', { class: 'ev-legend-item' }, h('span', { class: ['ev-swatch', `kind-${k}`] }), MARKER_LABEL[k])),
      );
      const dur = Math.max(1, player.duration);
      scrub.setAttribute('aria-valuemax', String(player.duration));
      replace(
        marks,
        (t?.markers ?? []).map((m) => {
          const d = h('button', {
            type: 'button',
            class: ['ev-mark', `kind-${m.kind}`],
            tabindex: '-1',
            title: `${formatMs(m.at)} · ${m.label}`,
            'aria-label': `${MARKER_LABEL[m.kind]} at ${formatMs(m.at)}: ${m.label}`,
            'data-testid': 'player-marker',
            dataset: { kind: m.kind, at: String(m.at) },
            onclick: (e: Event) => {
              e.stopPropagation();
              seek(m.at);
            },
          });
          d.style.left = `${(m.at / dur) * 100}%`;
          return d;
        }),
      );
    };
    if (tl) placeMarkers();
    this.offs.push(
      player.onState((st) => {
        placeMarkers();
        this.showState(st);
      }),
    );
    let dragging = false;
    const at = (e: PointerEvent) => {
      const r = scrub.getBoundingClientRect();
      return Math.max(0, Math.min(1, (e.clientX - r.left) / Math.max(1, r.width))) * player.duration;
    };
    scrub.addEventListener('pointerdown', (e) => {
      if ((e.target as HTMLElement).classList.contains('ev-mark')) return;
      dragging = true;
      scrub.setPointerCapture(e.pointerId);
      seek(at(e));
    });
    scrub.addEventListener('pointermove', (e) => {
      if (dragging) seek(at(e));
      const r = scrub.getBoundingClientRect();
      hover.hidden = false;
      hover.textContent = formatMs(at(e));
      hover.style.left = `${Math.max(0, Math.min(r.width, e.clientX - r.left))}px`;
    });
    scrub.addEventListener('pointerleave', () => (hover.hidden = true));
    const end = () => (dragging = false);
    scrub.addEventListener('pointerup', end);
    scrub.addEventListener('pointercancel', end);

    const speed = h(
      'select',
      {
        class: 'input small',
        'data-testid': 'player-speed',
        'aria-label': 'Playback speed',
        onchange: (e: Event) => player.setSpeed(Number((e.target as HTMLSelectElement).value)),
      },
      SPEEDS.map((x) => h('option', { value: String(x), selected: x === player.speed }, `${x}×`)),
    );
    const cap = h(
      'select',
      {
        class: 'input small',
        'data-testid': 'player-idle-cap',
        'aria-label': 'Idle-time cap',
        title: 'Silences longer than this play as this long',
        onchange: (e: Event) => {
          const v = (e.target as HTMLSelectElement).value;
          player.setIdleCap(v === '' ? null : Number(v));
        },
      },
      IDLE_CAPS.map(([v, label]) => h('option', { value: v === null ? '' : String(v), selected: v === player.idleCap }, label)),
    );
    this.el = h(
      'div',
      { class: 'ev-controls' },
      h(
        'div',
        { class: 'ev-controls-row' },
        this.playBtn,
        this.timeEl,
        scrub,
        h('label', { class: 'ev-ctl' }, h('span', { class: 'muted small' }, 'Speed'), speed),
        h('label', { class: 'ev-ctl' }, h('span', { class: 'muted small' }, 'Idle cap'), cap),
      ),
      h(
        'div',
        { class: 'ev-legend muted small' },
        legend,
        h('span', { class: 'spacer' }),
        h(
          'span',
          { class: 'ev-keys' },
          h('kbd', null, 'Space'),
          ' play/pause · ',
          h('kbd', null, '←'),
          h('kbd', null, '→'),
          ' 1 s (',
          h('kbd', null, 'Shift'),
          ' 5 s) · ',
          h('kbd', null, ','),
          h('kbd', null, '.'),
          ' frame · ',
          h('kbd', null, '['),
          h('kbd', null, ']'),
          ' markers · ',
          h('kbd', null, 'Home'),
          h('kbd', null, 'End'),
          ' · ',
          h('kbd', null, 'F'),
          ' full screen',
        ),
      ),
    );
  }

  /** Shows capture time ms on the clock and the timeline. */
  showTime(ms: number): void {
    showTimelineAt({ time: this.timeEl, fill: this.fillEl, head: this.headEl, scrub: this.scrub }, ms, this.player.duration);
  }

  private showState(st: PlayerState): void {
    replace(this.playBtn, st === 'playing' ? pauseIcon() : playIcon());
    const label = st === 'playing' ? 'Pause (space)' : 'Play (space)';
    this.playBtn.setAttribute('aria-label', label);
    this.playBtn.title = label;
  }

  dispose(): void {
    this.offs.forEach((f) => f());
  }
}

/** The parts of a timeline that show where playback is. */
export interface TimelineParts {
  time: HTMLElement; // "t / duration"
  fill: HTMLElement; // the played part of the track
  head: HTMLElement; // the playhead dot
  scrub: HTMLElement; // the slider (its aria value)
}

/** Shows time ms of duration on a timeline: its clock text, its played
 * part and playhead, and the slider's value for assistive technology.
 * The player's controls and the compare view's shared timeline both show
 * time this way. */
export function showTimelineAt(p: TimelineParts, ms: number, duration: number): void {
  p.time.textContent = `${formatMs(ms)} / ${formatMs(duration)}`;
  const pct = duration > 0 ? (ms / duration) * 100 : 0;
  p.fill.style.width = `${pct}%`;
  p.head.style.left = `${pct}%`;
  p.scrub.setAttribute('aria-valuenow', String(Math.round(ms)));
  p.scrub.setAttribute('aria-valuetext', formatMs(ms));
}

// Asciicast interchange in the compare view: import an asciicast v1, v2 or v3
// file as a terminal-only recording (saved in the library, clearly
// labelled as imported, every non-terminal dimension unknown) and replay
// it right here with the same Player.

import { api } from '../api/client';
import type { ImportAsciicastResult } from '../api/types';
import { h, icon, replace } from '../lib/dom';
import { formatBytes } from '../lib/format';
import { badge, filePicker, hashChip, loading } from '../lib/ui';
import { PREDICATE_TERMINAL_RECORDING, recordingAsCapture, type TerminalRecording } from './asciicast';
import { issuesBox } from './compare_result';
import { DIMENSION_LABEL, DIMENSIONS } from './compare_model';
import { formatMs } from './format';
import { Player } from './player';

/** Largest file the picker reads (the backend refuses larger ones too). */
const MAX_FILE_BYTES = 64 << 20;

export class AsciicastPanel {
  readonly el: HTMLElement;
  private readonly body = h('div', { class: 'cast-body' });
  private player: Player | null = null;
  private offs: (() => void)[] = [];

  constructor() {
    const input = filePicker('.cast,.json,.ndjson,.txt,application/x-asciicast', 'import-cast', 'Import an asciicast file', (f) => this.importFile(f));
    const pick = h('button', { type: 'button', class: 'btn', onclick: () => input.click() }, icon('plus'), 'Import asciicast…');
    this.el = h(
      'section',
      { class: 'card cast-card', 'aria-labelledby': 'cast-h', 'data-testid': 'asciicast-card' },
      h(
        'header',
        { class: 'card-head' },
        h(
          'div',
          null,
          h('h2', { id: 'cast-h' }, 'Asciicast interchange'),
          h(
            'p',
            { class: 'card-desc' },
            'Export a capture from its side above as asciicast v2 (sensitive input only as its placeholder). Import an asciicast v1, v2 or v3 file as a terminal-only recording: only the terminal was recorded, so interaction, exit, filesystem, protocol, process and shim stay unknown.',
          ),
        ),
        h('div', { class: 'card-actions' }, pick, input),
      ),
      this.body,
    );
  }

  destroy(): void {
    this.offs.forEach((f) => f());
    this.offs = [];
    this.player?.dispose();
    this.player = null;
  }

  /** Replays a saved imported recording (re-verified by GetEvidence). */
  async openSaved(id: string): Promise<void> {
    this.destroy();
    replace(this.body, loading('Opening the imported recording…'));
    try {
      const got = await api.GetEvidence({ id });
      const env = got.evidence as { predicate_type?: string; normalized_result?: TerminalRecording };
      if (env.predicate_type !== PREDICATE_TERMINAL_RECORDING || !env.normalized_result) {
        replace(this.body, h('div', { class: 'alert tone-warn', role: 'alert', 'data-testid': 'import-issues' }, icon('warn'), h('div', null, `${id} is ${env.predicate_type ?? 'unknown'} Evidence, not an imported asciicast recording.`)));
        return;
      }
      const rec = env.normalized_result;
      const duration = Math.max(0, ...rec.rendered_frames.map((f) => f.at_ms), ...rec.markers.map((m) => m.at_ms));
      await this.show({ evidence_id: id, predicate_type: PREDICATE_TERMINAL_RECORDING, origin: 'imported', label: rec.origin.label, version: rec.origin.version, frames: rec.frames.length, duration_ms: duration, record: rec });
      this.el.scrollIntoView({ block: 'start' });
    } catch (err) {
      replace(this.body, issuesBox(err, 'The recording could not be opened.', 'import-issues'));
    }
  }

  private async importFile(f: File): Promise<void> {
    this.destroy();
    if (f.size > MAX_FILE_BYTES) {
      replace(this.body, h('div', { class: 'alert tone-danger', role: 'alert', 'data-testid': 'import-issues' }, icon('warn'), h('div', null, `${f.name} is ${formatBytes(f.size)}; asciicast files over 64 MiB are refused.`)));
      return;
    }
    replace(this.body, loading(`Importing ${f.name} (${formatBytes(f.size)})…`));
    let res: ImportAsciicastResult;
    try {
      res = await api.ImportAsciicast({ name: f.name, text: await f.text() });
    } catch (err) {
      replace(this.body, issuesBox(err, `${f.name} was rejected; nothing was imported.`, 'import-issues'));
      return;
    }
    await this.show(res);
  }

  private async show(res: ImportAsciicastResult): Promise<void> {
    const rec = res.record as TerminalRecording;
    const screen = h('div', { class: 'ev-screen cmp-screen', 'data-testid': 'imported-screen' });
    const time = h('span', { class: 'ev-time mono', 'data-testid': 'imported-time' }, formatMs(0));
    const range = h('input', { type: 'range', class: 'cast-range', min: '0', max: String(res.duration_ms), step: '1', value: '0', 'aria-label': 'Imported recording timeline', 'data-testid': 'imported-timeline' });
    const play = h('button', { type: 'button', class: 'btn small', 'data-testid': 'imported-play' }, 'Play');
    const dims = h(
      'div',
      { class: 'cmp-strip cast-dims', role: 'list', 'aria-label': 'Dimensions of the imported recording' },
      DIMENSIONS.map((d) => {
        const observed = rec.dimensions[d] === 'observed';
        return h(
          'div',
          { role: 'listitem', class: ['cmp-dim', observed ? 'tone-ok' : 'tone-neutral'], dataset: { status: rec.dimensions[d] }, 'data-testid': `imported-dim-${d}` },
          h('span', { class: 'cmp-dim-name' }, DIMENSION_LABEL[d]),
          h('span', { class: 'cmp-dim-status' }, h('span', { class: 'cmp-dot', 'aria-hidden': 'true' }), observed ? 'Observed' : 'Unknown'),
        );
      }),
    );
    replace(
      this.body,
      h(
        'div',
        { class: 'cast-result', 'data-testid': 'imported-recording' },
        h(
          'div',
          { class: 'cast-meta' },
          badge(rec.origin.label, 'info', 'Made outside Gatehouse and imported from a file; not Process Capture Evidence'),
          badge(`asciicast v${rec.origin.version}`, 'neutral'),
          h('code', { class: 'mono' }, rec.origin.file_name),
          h('span', { class: 'muted small' }, `${res.frames} frames · ${formatMs(res.duration_ms)} · ${rec.terminal.columns}×${rec.terminal.rows}`),
          hashChip(res.evidence_id, { what: 'evidence id', len: 10 }),
        ),
        dims,
        h('section', { class: 'ev-replay cast-replay', 'aria-label': 'Imported recording replay' }, screen, h('div', { class: 'ev-controls' }, h('div', { class: 'ev-controls-row' }, play, time, range))),
        rec.origin.exit_status !== null ? h('p', { class: 'small muted' }, `The file records exit status ${rec.origin.exit_status}; no process was observed, so the exit dimension stays unknown.`) : null,
      ),
    );
    const p = new Player({ fontSize: 12 });
    this.player = p;
    p.mount(screen);
    await p.load(recordingAsCapture(rec));
    const show = (t: number) => {
      time.textContent = `${formatMs(t)} / ${formatMs(p.duration)}`;
      range.value = String(Math.round(t));
      screen.dataset.time = String(Math.round(t));
    };
    this.offs.push(
      p.onTime(show),
      p.onState((st) => (play.textContent = st === 'playing' ? 'Pause' : 'Play')),
    );
    play.addEventListener('click', () => p.toggle());
    range.addEventListener('input', () => void p.seek(Number(range.value)));
    // Show the final screen first: that is what a round trip checks.
    await p.seek(p.duration);
    await p.settled();
    show(p.time);
    screen.dataset.ready = 'true';
  }
}

// The Evidence library: the saved captures (made in the app or imported)
// with search, sort and delete, and import by file picker or drag and
// drop. Every import is verified by the backend before anything is saved;
// a file that fails is listed as rejected with all its failing paths and
// is never opened.

import { api, ApiError } from '../api/client';
import type { EvidenceItem, EvidenceSignature, Issue } from '../api/types';
import { h, icon, replace } from '../lib/dom';
import { formatBytes, formatDateTime, formatWhen, shortHash } from '../lib/format';
import { badge, emptyState, errorBox, exportButton, filterField, loading, pageHead } from '../lib/ui';
import { exitText, settlementTone } from './format';
import { downloadText } from './asciicast';
import { NewCapture } from './new_capture';

/** The name ending of an attestation kept next to its Evidence file. */
export const ATTESTATION_SUFFIX = '.intoto.jsonl';

/** What the library says about who signed a file, and its tone. */
export function signatureLabel(sig: EvidenceSignature | undefined): { text: string; tone: 'ok' | 'warn' | 'danger' | 'neutral'; title: string } {
  switch (sig?.status) {
    case 'installation':
      return { text: 'signed by this installation', tone: 'ok', title: `Signed attestation verified with this installation's key ${sig.fingerprint ?? ''}` };
    case 'trusted':
      return { text: `signed by ${shortFingerprint(sig.fingerprint)}`, tone: 'ok', title: `Signed attestation verified with the trusted key ${sig.fingerprint ?? ''}` };
    case 'untrusted':
      return { text: `signed by ${shortFingerprint(sig.fingerprint)} (not trusted)`, tone: 'warn', title: `An attestation signed by ${sig.fingerprint ?? 'an unknown key'}, which is not trusted here: add its public key in Security to verify it` };
    case 'invalid':
      return { text: 'signature invalid', tone: 'danger', title: sig.message ?? 'The attestation kept next to this file does not verify against it' };
    default:
      return { text: 'unsigned', tone: 'neutral', title: 'No attestation: use Export attestation to sign this file with this installation\'s key' };
  }
}

/** Downloads a signed attestation together with the exact Evidence file
 * it attests (the attestation's subject): FILE and FILE.intoto.jsonl. */
export function downloadAttested(r: { file_name: string; attestation: string; evidence_name: string; evidence: string }): void {
  const bin = atob(r.evidence);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/json' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = r.evidence_name;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
  downloadText(r.file_name, r.attestation, 'application/vnd.in-toto+json');
}

/** A fingerprint shortened for a badge ("SHA256:abcd…wxyz"). */
export function shortFingerprint(fp: string | undefined): string {
  if (!fp) return 'an unknown key';
  return fp.length > 24 ? `${fp.slice(0, 15)}…${fp.slice(-4)}` : fp;
}

/** Splits picked files into Evidence files, each with the attestation
 * named after it (FILE and FILE.intoto.jsonl), and attestations whose
 * Evidence file was not picked. */
export function pairAttestations<T extends { name: string }>(files: T[]): { evidence: { file: T; attestation?: T }[]; orphans: T[] } {
  const atts = new Map(files.filter((f) => f.name.endsWith(ATTESTATION_SUFFIX)).map((f) => [f.name, f]));
  const evidence = files.filter((f) => !f.name.endsWith(ATTESTATION_SUFFIX)).map((file) => {
    const attestation = atts.get(file.name + ATTESTATION_SUFFIX);
    atts.delete(file.name + ATTESTATION_SUFFIX);
    return { file, attestation };
  });
  return { evidence, orphans: [...atts.values()] };
}

/** The most bytes read from a picked file: the backend's import limit
 * (64 MiB) plus one, so that the backend itself refuses a larger file. */
const READ_LIMIT = 64 * 1024 * 1024 + 1;

export type SortKey = 'newest' | 'oldest' | 'command' | 'size' | 'exit';

export const SORTS: [SortKey, string][] = [
  ['newest', 'Newest first'],
  ['oldest', 'Oldest first'],
  ['command', 'Command A–Z'],
  ['size', 'Largest first'],
  ['exit', 'Exit status'],
];

/** One import attempt and its outcome. */
export interface ImportOutcome {
  name: string;
  state: 'importing' | 'imported' | 'present' | 'rejected';
  id?: string;
  message?: string;
  code?: string;
  issues?: Issue[];
}

/** Items matching a search query (every word, case-insensitive, in the
 * command, file name, id, exit, settlement or origin). */
export function filterItems(items: EvidenceItem[], query: string): EvidenceItem[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return items;
  return items.filter((it) => {
    const s = it.summary ?? {};
    const hay = [it.evidence_id, it.origin, it.predicate_type, s.command ?? '', s.file_name ?? '', exitText(s.exit), s.settlement ?? '', s.truncated ? 'truncated' : '', it.shared ? 'shared with agents' : '']
      .join(' ')
      .toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

/** Items sorted by key (a stable sort; ties keep newest first). */
export function sortItems(items: EvidenceItem[], key: SortKey): EvidenceItem[] {
  const byTime = (a: EvidenceItem, b: EvidenceItem) => Date.parse(b.created_at) - Date.parse(a.created_at);
  const exitRank = (it: EvidenceItem) => {
    const e = it.summary?.exit;
    if (!e) return 3;
    if (e.reason === 'exited' && e.code === 0) return 0;
    if (e.reason === 'exited') return 1;
    return 2;
  };
  const cmp: Record<SortKey, (a: EvidenceItem, b: EvidenceItem) => number> = {
    newest: byTime,
    oldest: (a, b) => -byTime(a, b),
    command: (a, b) => (a.summary?.command ?? a.evidence_id).localeCompare(b.summary?.command ?? b.evidence_id) || byTime(a, b),
    size: (a, b) => b.size - a.size || byTime(a, b),
    exit: (a, b) => exitRank(a) - exitRank(b) || byTime(a, b),
  };
  return [...items].sort(cmp[key]);
}

function toBase64(buf: ArrayBuffer): string {
  const bytes = new Uint8Array(buf);
  let s = '';
  const CHUNK = 0x8000;
  for (let i = 0; i < bytes.length; i += CHUNK) s += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(s);
}

/** The library page; `open(id)` navigates to a capture. */
export class Library {
  readonly el: HTMLElement;
  private items: EvidenceItem[] | null = null;
  private loadError: unknown = null;
  private query = '';
  private sort: SortKey = 'newest';
  private outcomes: ImportOutcome[] = [];
  private importing = false;
  private confirmDelete = '';
  private confirmTimer: ReturnType<typeof setTimeout> | undefined;
  private deleting = new Set<string>();
  private sharing = new Set<string>();
  private attesting = new Set<string>();
  private dragDepth = 0;
  private readonly fileInput: HTMLInputElement;
  private readonly dropHint: HTMLElement;
  private newCapture: NewCapture | null = null;
  private showNew = false;

  constructor() {
    this.el = h('div', { class: 'evidence-library', 'data-testid': 'evidence-library' });
    this.fileInput = h('input', {
      type: 'file',
      accept: '.json,application/json,.jsonl',
      multiple: true,
      hidden: true,
      'data-testid': 'evidence-file-input',
      onchange: () => {
        const files = [...(this.fileInput.files ?? [])];
        this.fileInput.value = '';
        void this.importFiles(files);
      },
    });
    this.dropHint = h('div', { class: 'ev-drop-hint', hidden: true, 'aria-hidden': 'true' }, h('div', null, icon('down'), h('strong', null, 'Drop Evidence files to import'), h('span', { class: 'muted small' }, 'Each file is verified before it is saved.')));
    this.el.addEventListener('dragenter', (e) => this.onDrag(e, 1));
    this.el.addEventListener('dragleave', (e) => this.onDrag(e, -1));
    this.el.addEventListener('dragover', (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    });
    this.el.addEventListener('drop', (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      this.dragDepth = 0;
      this.dropHint.hidden = true;
      void this.importFiles([...(e.dataTransfer?.files ?? [])]);
    });
    this.render();
  }

  private onDrag(e: DragEvent, d: number): void {
    if (!hasFiles(e)) return;
    e.preventDefault();
    this.dragDepth = Math.max(0, this.dragDepth + d);
    this.dropHint.hidden = this.dragDepth === 0;
  }

  /** Reloads the list from the backend. */
  async load(): Promise<void> {
    try {
      const r = await api.ListEvidence({});
      this.items = r.evidence ?? [];
      this.loadError = null;
    } catch (e) {
      this.loadError = e;
    }
    this.render();
  }

  /** Imports files one after another, showing progress and outcomes. */
  async importFiles(files: File[]): Promise<void> {
    if (!files.length || this.importing) return;
    this.importing = true;
    const { evidence, orphans } = pairAttestations(files);
    const batch: ImportOutcome[] = evidence.map(({ file, attestation }) => ({ name: attestation ? `${file.name} + ${attestation.name}` : file.name, state: 'importing' }));
    for (const o of orphans)
      batch.push({ name: o.name, state: 'rejected', code: 'attestation_without_evidence', message: `An attestation is imported together with its Evidence file: pick both ${o.name.slice(0, -ATTESTATION_SUFFIX.length)} and ${o.name}.` });
    this.outcomes = batch;
    this.render();
    for (const [i, { file: f, attestation }] of evidence.entries()) {
      const o = batch[i]!;
      try {
        const data = toBase64(await f.slice(0, READ_LIMIT).arrayBuffer());
        const att = attestation ? toBase64(await attestation.slice(0, 2 * 1024 * 1024).arrayBuffer()) : undefined;
        const r = await api.ImportEvidence(att ? { name: f.name, data, attestation: att } : { name: f.name, data });
        o.state = r.already_present ? 'present' : 'imported';
        o.id = r.item.evidence_id;
      } catch (e) {
        o.state = 'rejected';
        if (e instanceof ApiError) {
          o.code = e.code;
          o.message = e.message;
          o.issues = Array.isArray(e.details) ? (e.details as Issue[]) : [];
        } else {
          o.message = e instanceof Error ? e.message : String(e);
        }
      }
      this.render();
    }
    this.importing = false;
    await this.load();
  }

  private async remove(id: string): Promise<void> {
    if (this.confirmDelete !== id) {
      this.confirmDelete = id;
      clearTimeout(this.confirmTimer);
      this.confirmTimer = setTimeout(() => {
        this.confirmDelete = '';
        this.render();
      }, 5000);
      this.render();
      this.el.querySelector<HTMLElement>(`[data-testid="evidence-delete"][data-id="${id}"]`)?.focus();
      return;
    }
    this.confirmDelete = '';
    this.deleting.add(id);
    this.render();
    try {
      await api.DeleteEvidence({ id });
    } catch (e) {
      this.loadError = e;
    }
    this.deleting.delete(id);
    await this.load();
  }

  /** Shares a saved capture with agents (MCP), or stops sharing it. */
  private async toggleShare(it: EvidenceItem): Promise<void> {
    const id = it.evidence_id;
    await this.rowAction(id, this.sharing, 'evidence-share', async () => {
      const r = await api.ShareEvidence({ id, shared: !it.shared });
      this.items = (this.items ?? []).map((x) => (x.evidence_id === id ? r.item : x));
    });
  }

  /** Signs an attestation of a saved file with this installation's key,
   * keeps it next to the file and downloads it (FILE.intoto.jsonl). */
  private async exportAttestation(it: EvidenceItem): Promise<void> {
    const id = it.evidence_id;
    await this.rowAction(id, this.attesting, 'evidence-attest', async () => {
      const r = await api.AttestEvidence({ id });
      downloadAttested(r);
      this.items = (this.items ?? []).map((x) => (x.evidence_id === id ? { ...x, signature: r.signature } : x));
    });
  }

  /** Runs act for the row of id while busy holds it (its button shows
   * the wait), keeps a failure as the load error, then gives the focus
   * back to the row's button (data-testid testid). */
  private async rowAction(id: string, busy: Set<string>, testid: string, act: () => Promise<void>): Promise<void> {
    busy.add(id);
    this.renderTable();
    try {
      await act();
    } catch (e) {
      this.loadError = e;
      this.render();
    }
    busy.delete(id);
    this.renderTable();
    this.el.querySelector<HTMLElement>(`[data-testid="${testid}"][data-id="${id}"]`)?.focus();
  }

  // ---- rendering --------------------------------------------------------

  render(): void {
    const focused = document.activeElement instanceof HTMLElement && this.el.contains(document.activeElement) ? document.activeElement.dataset.testid : undefined;
    const head = pageHead(
      'Evidence',
      'Process captures made here or imported from files. Each file is verified when it is imported and again whenever it is opened.',
      filterField(
        'Search',
        h('input', {
          type: 'search',
          class: 'input small',
          placeholder: 'command, id, exit…',
          value: this.query,
          'data-testid': 'evidence-search',
          oninput: (e: Event) => {
            this.query = (e.target as HTMLInputElement).value;
            this.renderTable();
          },
        }),
      ),
      filterField(
        'Sort',
        h(
          'select',
          {
            class: 'input small',
            'data-testid': 'evidence-sort',
            onchange: (e: Event) => {
              this.sort = (e.target as HTMLSelectElement).value as SortKey;
              this.renderTable();
            },
          },
          SORTS.map(([k, label]) => h('option', { value: k, selected: this.sort === k }, label)),
        ),
      ),
      h('button', { type: 'button', class: 'btn small', 'data-testid': 'evidence-new-capture', 'aria-expanded': String(this.showNew), onclick: () => this.toggleNew() }, icon('evidence'), 'New capture'),
      h('button', { type: 'button', class: 'btn primary small', 'data-testid': 'evidence-import', disabled: this.importing, onclick: () => this.fileInput.click() }, icon('plus'), this.importing ? 'Importing…' : 'Import…'),
    );
    const out: Node[] = [head, this.fileInput];
    if (this.showNew && this.newCapture) out.push(this.newCapture.el);
    if (this.outcomes.length) out.push(this.outcomesBox());
    if (this.loadError) out.push(errorBox(this.loadError, 'Could not load the Evidence library.'));
    if (!this.items && !this.loadError) out.push(loading('Loading the Evidence library…'));
    else if (this.items && this.items.length === 0) {
      out.push(
        h(
          'div',
          { class: 'ev-dropzone', 'data-testid': 'evidence-empty' },
          emptyState(
            'No Evidence yet',
            'Captures made here (New capture), by an agent or on the command line appear here. To import Evidence files, drop them anywhere on this page or use Import…',
            h('code', { class: 'mono small' }, 'gatehouse capture-process scenario.json'),
          ),
        ),
      );
    } else if (this.items) out.push(h('div', { class: 'table-wrap', 'data-testid': 'evidence-table-wrap' }, this.table()), h('p', { class: 'table-count muted small' }, this.countText()));
    out.push(this.dropHint);
    replace(this.el, ...out);
    if (focused) this.el.querySelector<HTMLElement>(`[data-testid="${focused}"]`)?.focus();
  }

  private renderTable(): void {
    const wrap = this.el.querySelector('[data-testid="evidence-table-wrap"]');
    if (!wrap) return this.render();
    replace(wrap, this.table());
    const count = this.el.querySelector('.table-count');
    if (count) count.textContent = this.countText();
  }

  private visible(): EvidenceItem[] {
    return sortItems(filterItems(this.items ?? [], this.query), this.sort);
  }

  private countText(): string {
    const n = this.visible().length;
    const total = this.items?.length ?? 0;
    return n === total ? `${n} file${n === 1 ? '' : 's'}` : `${n} of ${total} files`;
  }

  private table(): HTMLTableElement {
    const list = this.visible();
    return h(
      'table',
      { class: 'table evidence-table', 'data-testid': 'evidence-table' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { scope: 'col' }, 'Saved'),
          h('th', { scope: 'col' }, 'Command'),
          h('th', { scope: 'col' }, 'Exit'),
          h('th', { scope: 'col' }, 'Settlement'),
          h('th', { scope: 'col', class: 'num' }, 'Frames'),
          h('th', { scope: 'col', class: 'num' }, 'Size'),
          h('th', { scope: 'col' }, h('span', { class: 'ev-sr-only' }, 'Actions')),
        ),
      ),
      h(
        'tbody',
        null,
        list.length === 0
          ? h('tr', { class: 'empty-row' }, h('td', { colspan: '7' }, emptyState('No matching Evidence', 'Change or clear the search to see more.')))
          : list.map((it) => this.row(it)),
      ),
    );
  }

  private row(it: EvidenceItem): HTMLTableRowElement {
    const s = it.summary ?? {};
    const href = `#/evidence/${encodeURIComponent(it.evidence_id)}`;
    const isCapture = it.predicate_type === 'gatehouse.process-capture/v4';
    const open = () => (location.hash = href);
    const confirming = this.confirmDelete === it.evidence_id;
    return h(
      'tr',
      {
        class: 'clickable',
        tabindex: '0',
        'data-testid': 'evidence-row',
        dataset: { id: it.evidence_id },
        onclick: (e: Event) => {
          if ((e.target as HTMLElement).closest('button')) return;
          open();
        },
        onkeydown: (e: KeyboardEvent) => {
          if ((e.key === 'Enter' || e.key === ' ') && e.target === e.currentTarget) {
            e.preventDefault();
            open();
          }
          if (e.key === 'Delete' && e.target === e.currentTarget) void this.remove(it.evidence_id);
        },
      },
      h('td', { class: 'nowrap', title: formatDateTime(it.created_at) }, formatWhen(it.created_at)),
      h(
        'td',
        { class: 'ev-cmd' },
        h('a', { href, class: 'row-link', tabindex: '-1' }, h('code', { class: 'mono', title: s.command ?? '' }, s.command || (isCapture ? '—' : it.predicate_type))),
        h(
          'div',
          { class: 'ev-sub muted small' },
          h('code', { class: 'mono', title: it.evidence_id }, shortHash(it.evidence_id, 15)),
          badge(it.origin, it.origin === 'imported' ? 'info' : 'neutral'),
          it.shared ? badge('shared with agents', 'info') : null,
          signatureBadge(it.signature),
          s.file_name ? h('span', { class: 'ellipsis', title: s.file_name }, s.file_name) : null,
        ),
      ),
      h('td', { class: 'nowrap' }, s.exit ? badge(exitText(s.exit), s.exit.reason === 'exited' && s.exit.code === 0 ? 'ok' : 'warn') : h('span', { class: 'muted' }, '—')),
      h('td', { class: 'nowrap' }, s.settlement ? badge(s.settlement.replace(/_/g, ' '), settlementTone(s.settlement)) : h('span', { class: 'muted' }, '—'), s.truncated ? badge('truncated', 'danger') : null),
      h('td', { class: 'num' }, s.frames ?? '—'),
      h('td', { class: 'num nowrap' }, formatBytes(it.size)),
      h(
        'td',
        { class: 'num ev-actions' },
        h(
          'button',
          {
            type: 'button',
            class: ['btn', 'small', 'ghost'],
            'data-testid': 'evidence-attest',
            dataset: { id: it.evidence_id },
            disabled: this.attesting.has(it.evidence_id),
            title: 'Sign an in-toto attestation of this file with this installation\'s key and download both (FILE and FILE.intoto.jsonl); cosign verify-blob-attestation and gatehouse evidence verify --attestation check them',
            onclick: () => void this.exportAttestation(it),
          },
          this.attesting.has(it.evidence_id) ? 'Signing…' : 'Export attestation',
        ),
        h(
          'button',
          {
            type: 'button',
            class: ['btn', 'small', 'ghost'],
            'data-testid': 'evidence-share',
            dataset: { id: it.evidence_id },
            disabled: this.sharing.has(it.evidence_id),
            'aria-pressed': it.shared ? 'true' : 'false',
            'aria-label': it.shared ? 'Stop sharing this file with agents' : 'Share this file with agents',
            title: it.shared
              ? 'Every agent connected over MCP can list, read and compare this file. Click to stop sharing.'
              : 'Only the agent connection that made a capture can read it. Share to let every agent connected over MCP list, read and compare this file.',
            onclick: () => void this.toggleShare(it),
          },
          it.shared ? 'Unshare' : 'Share',
        ),
        h(
          'button',
          {
            type: 'button',
            class: ['btn', 'small', confirming ? 'danger' : 'ghost'],
            'data-testid': 'evidence-delete',
            dataset: { id: it.evidence_id },
            disabled: this.deleting.has(it.evidence_id),
            'aria-label': confirming ? 'Confirm: delete this Evidence file' : 'Delete this Evidence file',
            onclick: () => void this.remove(it.evidence_id),
          },
          this.deleting.has(it.evidence_id) ? 'Deleting…' : confirming ? 'Confirm delete' : 'Delete',
        ),
      ),
    );
  }

  private outcomesBox(): HTMLElement {
    const done = this.outcomes.filter((o) => o.state !== 'importing').length;
    return h(
      'section',
      { class: 'ev-imports', 'data-testid': 'evidence-imports', 'aria-live': 'polite' },
      h(
        'header',
        { class: 'ev-imports-head' },
        h('strong', null, this.importing ? `Importing ${Math.min(done + 1, this.outcomes.length)} of ${this.outcomes.length}…` : `Import finished: ${this.outcomes.length} file${this.outcomes.length === 1 ? '' : 's'}`),
        this.importing
          ? null
          : h('button', { type: 'button', class: 'icon-btn', 'data-testid': 'evidence-imports-dismiss', 'aria-label': 'Dismiss import results', title: 'Dismiss', onclick: () => ((this.outcomes = []), this.render()) }, icon('x')),
      ),
      h(
        'ul',
        { class: 'ev-import-list' },
        this.outcomes.map((o) =>
          h(
            'li',
            { class: ['ev-import', `is-${o.state}`], 'data-testid': 'evidence-import-outcome', dataset: { state: o.state, name: o.name } },
            h(
              'div',
              { class: 'ev-import-line' },
              o.state === 'importing'
                ? h('span', { class: 'spinner', 'aria-hidden': 'true' })
                : o.state === 'rejected'
                  ? icon('x', 'rejected')
                  : icon('check', 'accepted'),
              h('code', { class: 'mono' }, o.name),
              o.state === 'importing'
                ? h('span', { class: 'muted' }, 'verifying…')
                : o.state === 'rejected'
                  ? badge('rejected', 'danger')
                  : o.state === 'present'
                    ? badge('already in the library', 'neutral')
                    : badge('verified and imported', 'ok'),
              o.id ? h('a', { href: `#/evidence/${encodeURIComponent(o.id)}`, class: 'small' }, 'Open') : null,
            ),
            o.state === 'rejected'
              ? h(
                  'div',
                  { class: 'ev-import-why' },
                  h('p', { class: 'small' }, o.message ?? 'rejected', o.code ? h('span', { class: 'code-tag' }, o.code) : null),
                  o.issues && o.issues.length
                    ? h(
                        'ul',
                        { class: 'ev-issues', 'data-testid': 'evidence-import-issues' },
                        o.issues.map((is) => h('li', null, h('code', { class: 'mono ev-issue-path' }, is.path), ' ', h('span', { class: 'code-tag' }, is.code), ' ', h('span', { class: 'small' }, is.message))),
                      )
                    : null,
                )
              : null,
          ),
        ),
      ),
    );
  }

  /** Opens or closes the New capture editor (its text is kept). */
  private toggleNew(open = !this.showNew): void {
    this.showNew = open;
    if (open && !this.newCapture) this.newCapture = new NewCapture(() => this.toggleNew(false));
    this.render();
    if (open) this.newCapture?.focus();
    else this.el.querySelector<HTMLElement>('[data-testid="evidence-new-capture"]')?.focus();
  }

  destroy(): void {
    clearTimeout(this.confirmTimer);
    this.newCapture?.destroy();
  }
}

/** An "Export attestation" button for saved Evidence (the comparison
 * view uses it): signs with this installation's key and downloads
 * FILE.intoto.jsonl. */
export function attestationButton(id: string): HTMLButtonElement {
  return exportButton({
    label: 'Export attestation',
    busy: 'Signing…',
    done: 'Attestation exported',
    testid: 'export-attestation',
    title: "Sign an in-toto attestation of this saved Evidence with this installation's key and download both (FILE and FILE.intoto.jsonl)",
    run: async () => downloadAttested(await api.AttestEvidence({ id })),
  });
}

function signatureBadge(sig: EvidenceSignature | undefined): HTMLElement {
  const l = signatureLabel(sig);
  const b = badge(l.text, l.tone, l.title);
  b.dataset.testid = 'evidence-signature';
  b.dataset.status = sig?.status ?? 'unsigned';
  return b;
}

function hasFiles(e: DragEvent): boolean {
  return !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');
}

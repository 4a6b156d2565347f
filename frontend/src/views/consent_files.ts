// The consent dialog's read-only file viewer: one file of the proposal's
// frozen snapshot (ProposalFile: the bytes the run stages, never the
// folder), monospace with line numbers, or, for a file changed since the
// revision the person approved, a line diff against that revision. Text
// goes through h(), so control and invisible characters show as markers.

import { api } from '../api/client';
import type { FileContent, ProposalFileResult } from '../api/types';
import { lineDiff, splitLines } from '../lib/consent_model';
import { h } from '../lib/dom';
import { formatBytes, shortHash } from '../lib/format';
import { badge, errorBox, loading } from '../lib/ui';

/** What the viewer shows for one card. */
export interface FileViewer {
  path: string;
  mode: 'file' | 'diff';
  res?: ProposalFileResult;
  error?: unknown;
}

/** Loads one file of a proposal's snapshot into v, then calls done. */
export async function loadFile(proposalId: string, v: FileViewer, done: () => void): Promise<void> {
  try {
    v.res = await api.ProposalFile({ proposalId, path: v.path });
    if (v.res.change === '' || v.res.change === 'added') v.mode = 'file';
  } catch (e) {
    v.error = e;
  }
  done();
}

function contentNote(c: FileContent): HTMLElement | null {
  if (c.binary) return h('p', { class: 'muted small', 'data-testid': 'consent-file-binary' }, `Binary file (${formatBytes(c.size)}, ${shortHash(c.sha256, 16)}): its bytes are not shown as text.`);
  if (c.truncated) return h('p', { class: 'muted small' }, `Only the first ${formatBytes(c.text.length)} of ${formatBytes(c.size)} are shown.`);
  return null;
}

function codeLines(text: string): HTMLElement {
  const lines = splitLines(text);
  return h(
    'table',
    { class: 'code-lines' },
    h(
      'tbody',
      null,
      lines.map((t, i) => h('tr', null, h('td', { class: 'ln', 'aria-hidden': 'true' }, String(i + 1)), h('td', { class: 'lc' }, t))),
    ),
  );
}

function diffLines(before: string, after: string): HTMLElement {
  const rows = lineDiff(before, after);
  return h(
    'table',
    { class: 'code-lines diff' },
    h(
      'tbody',
      null,
      rows.map((l) =>
        h(
          'tr',
          { class: l.kind },
          h('td', { class: 'ln', 'aria-hidden': 'true' }, l.oldNo ? String(l.oldNo) : ''),
          h('td', { class: 'ln', 'aria-hidden': 'true' }, l.newNo ? String(l.newNo) : ''),
          h('td', { class: 'sign' }, l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' '),
          h('td', { class: 'lc' }, l.text),
        ),
      ),
    ),
  );
}

/** The viewer's panel. onMode switches file/diff, onClose closes it. */
export function fileViewer(v: FileViewer, onMode: (m: 'file' | 'diff') => void, onClose: () => void): HTMLElement {
  const r = v.res;
  const changed = r && (r.change === 'modified' || r.change === 'removed');
  const head = h(
    'div',
    { class: 'file-view-head' },
    h('code', { class: 'mono file-view-path' }, v.path),
    r?.current ? h('span', { class: 'muted small' }, formatBytes(r.current.size)) : null,
    r?.change ? badge(r.change === 'modified' ? 'Changed since approved' : r.change === 'added' ? 'New since approved' : 'Removed since approved', 'warn') : null,
    h('span', { class: 'muted small' }, 'read-only · the staged bytes'),
    h(
      'div',
      { class: 'file-view-actions' },
      changed
        ? h(
            'div',
            { class: 'seg', role: 'group', 'aria-label': 'Show' },
            h('button', { type: 'button', class: ['btn', 'small', v.mode === 'diff' ? 'primary' : ''], 'aria-pressed': String(v.mode === 'diff'), 'data-testid': 'consent-file-diff', dataset: { focusKey: 'file-diff' }, onclick: () => onMode('diff') }, 'Changes'),
            h('button', { type: 'button', class: ['btn', 'small', v.mode === 'file' ? 'primary' : ''], 'aria-pressed': String(v.mode === 'file'), 'data-testid': 'consent-file-whole', dataset: { focusKey: 'file-whole' }, onclick: () => onMode('file') }, 'Whole file'),
          )
        : null,
      h('button', { type: 'button', class: 'btn small', 'data-testid': 'consent-file-close', dataset: { focusKey: 'file-close' }, onclick: onClose, title: 'Close the file (Esc)' }, 'Close file'),
    ),
  );
  let body: Node;
  if (v.error) body = errorBox(v.error, 'Could not open this file:');
  else if (!r) body = loading('Opening the staged file…');
  else if (v.mode === 'diff' && changed) {
    if (r.previous && !r.previous.binary && (!r.current || !r.current.binary)) {
      body = h('div', null, r.previous.truncated || r.current?.truncated ? h('p', { class: 'muted small' }, 'One side is longer than the viewer shows; the diff covers the shown part.') : null, diffLines(r.previous.text, r.current?.text ?? ''));
    } else if (r.previous) {
      body = h('p', { class: 'muted small' }, `A binary file changed (${shortHash(r.previous.sha256, 16)} → ${r.current ? shortHash(r.current.sha256, 16) : 'removed'}).`);
    } else {
      body = h('p', { class: 'muted small', 'data-testid': 'consent-file-previous-note' }, r.previousNote || 'The approved revision of this file is not available.');
    }
  } else if (!r.current) body = h('p', { class: 'muted small' }, 'This file is not in the revision that would run (it was removed since the one you approved).');
  else body = h('div', null, contentNote(r.current), r.current.binary ? null : codeLines(r.current.text));
  return h(
    'section',
    { class: 'file-view', 'data-testid': 'consent-file', dataset: { path: v.path, mode: v.mode }, 'aria-label': `File ${v.path}` },
    head,
    h('div', { class: 'file-view-body', tabindex: '0', 'data-testid': 'consent-file-body', dataset: { focusKey: 'file-body' }, 'aria-label': `${v.path}, read-only` }, body),
  );
}

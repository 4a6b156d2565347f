// Small shared UI pieces built with h().

import { ApiError } from '../api/client';
import { h, icon } from './dom';
import { shortHash } from './format';
import type { Tone } from './labels';

export function badge(label: string, tone: Tone = 'neutral', title?: string): HTMLSpanElement {
  return h('span', { class: ['badge', `tone-${tone}`], title }, label);
}

async function writeClipboard(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall back below */
  }
  const ta = h('textarea', { class: 'offscreen', 'aria-hidden': 'true', readonly: true });
  ta.value = text;
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  ta.remove();
  return ok;
}

/**
 * A file input kept offscreen (a visible button clicks it): the one file
 * the person picks goes to onFile, and the input is reset first so the same
 * file can be picked again.
 */
export function filePicker(accept: string, testid: string, label: string, onFile: (f: File) => void | Promise<void>): HTMLInputElement {
  return h('input', {
    type: 'file',
    accept,
    class: 'offscreen',
    'data-testid': testid,
    'aria-label': label,
    onchange: (e: Event) => {
      const f = (e.target as HTMLInputElement).files?.[0];
      (e.target as HTMLInputElement).value = '';
      if (f) void onFile(f);
    },
  });
}

/**
 * A small ghost button that runs an export: while run is pending it is
 * disabled and reads busy; then it reads done, or "Export failed" with the
 * error as its title, for two seconds before label returns.
 */
export function exportButton(o: {
  label: string;
  busy: string;
  done: string;
  title: string;
  testid: string;
  disabled?: boolean;
  run: () => Promise<void>;
}): HTMLButtonElement {
  return h(
    'button',
    {
      type: 'button',
      class: 'btn small ghost',
      'data-testid': o.testid,
      disabled: o.disabled ?? false,
      title: o.title,
      onclick: async (e: Event) => {
        const b = e.currentTarget as HTMLButtonElement;
        b.disabled = true;
        b.textContent = o.busy;
        try {
          await o.run();
          b.textContent = o.done;
        } catch (err) {
          b.textContent = 'Export failed';
          b.title = err instanceof Error ? err.message : String(err);
        } finally {
          b.disabled = false;
          setTimeout(() => (b.textContent = o.label), 2000);
        }
      },
    },
    o.label,
  );
}

/** A list page's header: its title and one lead sentence, then its
 * filters and actions in a search landmark. */
export function pageHead(title: string, lead: string, ...tools: Node[]): HTMLElement {
  return h('header', { class: 'page-head' }, h('div', null, h('h1', null, title), h('p', { class: 'muted small' }, lead)), h('div', { class: 'filters', role: 'search' }, ...tools));
}

/** One labelled filter control of a page header. */
export function filterField(label: string, control: HTMLElement): HTMLLabelElement {
  return h('label', { class: 'filter' }, h('span', null, label), control);
}

/** A small icon button that copies `text` and confirms with a tick. */
export function copyButton(text: string, what = 'value', testid?: string): HTMLButtonElement {
  const label = `Copy ${what}`;
  const btn = h('button', { type: 'button', class: 'icon-btn copy-btn', title: label, 'aria-label': label, 'data-testid': testid }, icon('copy'));
  btn.addEventListener('click', async (e) => {
    e.stopPropagation();
    const ok = await writeClipboard(text);
    btn.replaceChildren(icon(ok ? 'check' : 'x'));
    btn.classList.toggle('copied', ok);
    btn.setAttribute('aria-label', ok ? 'Copied' : 'Copy failed');
    btn.title = ok ? 'Copied' : 'Copy failed: select the text and copy it by hand';
    setTimeout(() => {
      btn.replaceChildren(icon('copy'));
      btn.classList.remove('copied');
      btn.setAttribute('aria-label', label);
      btn.title = label;
    }, 1500);
  });
  return btn;
}

/** A revision (or any long hash) shown short, full on hover, with copy. */
export function hashChip(full: string, opts: { testid?: string; len?: number; what?: string } = {}): HTMLSpanElement {
  if (!full) return h('span', { class: 'muted' }, '—');
  return h(
    'span',
    { class: 'hash', 'data-testid': opts.testid, dataset: { full } },
    h('code', { class: 'mono', title: full }, shortHash(full, opts.len ?? 12)),
    copyButton(full, opts.what ?? 'full revision'),
  );
}

/** A path in monospace that truncates from the left visually but keeps
 * the full text in the title. */
export function pathText(p: string, cls = ''): HTMLElement {
  return h('code', { class: ['mono', 'path', cls], title: p }, p);
}

/** An empty state: a title, guidance (text, or a node for inline code) and actions. */
export function emptyState(title: string, guidance: string | Node, ...extra: (Node | string)[]): HTMLElement {
  return h('div', { class: 'empty' }, h('p', { class: 'empty-title' }, title), h('p', { class: 'empty-text' }, guidance), ...extra);
}

/** A labelled activity indicator (never a bare spinner). */
export function loading(label: string): HTMLElement {
  return h('div', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), h('span', null, label));
}

/** A error box for a failed call. */
export function errorBox(err: unknown, prefix?: string): HTMLElement {
  const e = err instanceof ApiError ? err : null;
  const message = e ? e.message : err instanceof Error ? err.message : String(err);
  return h(
    'div',
    { class: 'alert tone-danger', role: 'alert' },
    icon('warn'),
    h('div', null, prefix ? h('strong', null, prefix + ' ') : null, message, e && e.code !== 'error' ? h('span', { class: 'code-tag' }, e.code) : null),
  );
}

/** A definition list from [label, value] pairs (null values skipped). */
export function kv(rows: [string, Node | string | number | null | undefined][], cls = ''): HTMLDListElement {
  const dl = h('dl', { class: ['kv', cls] });
  for (const [k, v] of rows) {
    if (v === null || v === undefined) continue;
    dl.append(h('dt', null, k), h('dd', null, typeof v === 'number' ? String(v) : v));
  }
  return dl;
}

/** A monospace, scrollable JSON/code block. */
export function codeBlock(text: string, opts: { testid?: string; label?: string; cls?: string } = {}): HTMLPreElement {
  return h(
    'pre',
    { class: ['code', opts.cls ?? ''], tabindex: '0', 'data-testid': opts.testid, 'aria-label': opts.label },
    h('code', null, text),
  );
}

/** Field-level error text under an input. */
export function fieldErrors(messages: string[] | undefined, id?: string): HTMLElement | null {
  if (!messages || messages.length === 0) return null;
  return h('div', { class: 'field-error', id, role: 'alert' }, messages.join(' · '));
}

/** Section card with a heading row (title, optional description and actions). */
export function card(
  title: string,
  opts: { description?: string | Node; actions?: Node[]; id?: string; testid?: string } = {},
  ...body: (Node | null)[]
): HTMLElement {
  return h(
    'section',
    { class: 'card', id: opts.id, 'data-testid': opts.testid, 'aria-labelledby': opts.id ? `${opts.id}-h` : undefined },
    h(
      'header',
      { class: 'card-head' },
      h('div', null, h('h2', { id: opts.id ? `${opts.id}-h` : undefined }, title), opts.description ? h('p', { class: 'card-desc' }, opts.description) : null),
      opts.actions ? h('div', { class: 'card-actions' }, ...opts.actions) : null,
    ),
    ...body,
  );
}

/** Progress bar: determinate with total, otherwise indeterminate. */
export function progressBar(p: { completed: number; total?: number; message?: string } | undefined, label: string): HTMLElement {
  const total = p?.total;
  const det = p !== undefined && total !== undefined && total > 0;
  const pct = det ? Math.max(0, Math.min(100, (p.completed / total) * 100)) : 0;
  const text = p
    ? det
      ? `${p.completed} of ${total}${p.message ? ' — ' + p.message : ''}`
      : `${p.completed} done${p.message ? ' — ' + p.message : ''}`
    : label;
  const fill = h('span', { class: 'fill' });
  if (det) fill.style.width = `${pct.toFixed(1)}%`; // CSSOM, allowed by the CSP
  return h(
    'div',
    { class: 'progress' },
    h(
      'div',
      {
        class: ['bar', det ? '' : 'indeterminate'],
        role: 'progressbar',
        'aria-label': label,
        'aria-valuemin': det ? '0' : undefined,
        'aria-valuemax': det ? String(total) : undefined,
        'aria-valuenow': det ? String(p.completed) : undefined,
        'aria-valuetext': text,
      },
      fill,
    ),
    h('span', { class: 'progress-text' }, text),
  );
}

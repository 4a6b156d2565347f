// The scaffold every Security settings section shares: load from the server
// (keeping the load error), re-render without losing focus, save with a
// "saving" state and a "Nothing was saved." box, and notice a change made
// elsewhere while the user has unsaved edits. Each section keeps its own
// data, draft, field errors and markup; this only holds what is the same.

import { ApiError } from '../api/client';
import { h, icon, replace } from '../lib/dom';
import { normalizePath } from '../lib/policy';
import { card, errorBox, loading } from '../lib/ui';

type Child = Parameters<typeof h>[2];

/** What a section tells its scaffold. */
export interface SectionSpec {
  /** Fetches the section's data and stores it in the section; throws when it cannot. */
  fetch: () => Promise<void>;
  /** Builds the section's whole content from its current state. */
  view: () => HTMLElement;
  /** Whether the draft differs from what was loaded; without it, a change elsewhere always reloads. */
  dirty?: () => boolean;
}

/** Load, render and save state of one section, drawn into root. */
export class SettingsSection {
  /** The error of the last load; null once a load succeeds. */
  loadError: unknown = null;
  /** A save failure that is not a list of field errors; shown in the "Nothing was saved." box. */
  saveError: unknown = null;
  /** True while a save is in flight. */
  saving = false;
  /** True when the saved data changed elsewhere while this draft had unsaved edits. */
  changedElsewhere = false;

  constructor(
    private readonly root: HTMLElement,
    private readonly spec: SectionSpec,
  ) {}

  /** Fetches the data and re-renders; a failure is kept in loadError, never thrown. */
  async load(): Promise<void> {
    try {
      await this.spec.fetch();
      this.loadError = null;
      this.changedElsewhere = false;
    } catch (e) {
      this.loadError = e;
    }
    this.render();
  }

  /** Redraws the section; focus returns to the element with the same data-focus-key. */
  render(): void {
    const active = document.activeElement;
    const focusKey = active instanceof HTMLElement && this.root.contains(active) ? active.dataset.focusKey : undefined;
    replace(this.root, this.spec.view());
    if (focusKey) this.root.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`)?.focus();
  }

  /** Reacts to a change made elsewhere: ignored while saving, flagged over unsaved edits, otherwise reloaded. */
  external(): void {
    if (this.saving) return;
    if (this.spec.dirty?.()) {
      this.changedElsewhere = true;
      this.render();
    } else void this.load();
  }

  /** Runs one save: rendered as saving while send runs; an error that fieldErrors does
   * not take as field errors (by returning true) becomes saveError. Always re-renders;
   * focus then goes to the answer in this section (the "Nothing was saved." box or a
   * saved note, see resultSelector), or stays on the Save button. */
  async save(send: () => Promise<void>, fieldErrors: (e: unknown) => boolean): Promise<void> {
    this.saving = true;
    this.render();
    try {
      await send();
    } catch (e) {
      if (!fieldErrors(e)) this.saveError = e;
    } finally {
      this.saving = false;
      this.render();
    }
  }

  /** The card shown instead of the section when it cannot be drawn: the load
   * error (prefixed by failed) if the last load failed, else "waiting". */
  placeholder(title: string, failed: string, waiting: string): HTMLElement {
    return card(title, {}, this.loadError ? errorBox(this.loadError, failed) : loading(waiting));
  }

  /** The "changed elsewhere" warning with a button that loads the saved data (discarding the draft). */
  changedElsewhereNote(what: string, button: string, after?: string): HTMLElement | null {
    if (!this.changedElsewhere) return null;
    return h('div', { class: 'alert tone-warn small' }, icon('warn'), h('div', null, what, h('button', { type: 'button', class: 'btn small', onclick: () => void this.load() }, button), after));
  }

  /** The section's primary Save button: disabled and relabelled while saving. */
  saveButton(testid: string, label: string, onSave: () => void): HTMLButtonElement {
    return h('button', { type: 'button', class: 'btn primary', 'data-testid': testid, disabled: this.saving, onclick: onSave }, this.saving ? 'Saving…' : label);
  }

  /** The "Nothing was saved." box: shown when there are field problems or a saveError.
   * problems is the text for field errors; a saveError's message is shown instead
   * unless preferProblems and there are problems. */
  notSaved(testid: string, problems: number, problemText: string, extra?: Child, preferProblems = false): HTMLElement | null {
    if (!problems && !this.saveError) return null;
    const e = this.saveError;
    const text = e && !(preferProblems && problems) ? (e instanceof Error ? e.message : String(e)) : problemText;
    return h('div', { class: 'alert tone-danger', role: 'alert', tabindex: '-1', 'data-testid': testid }, icon('warn'), h('div', null, h('strong', null, 'Nothing was saved. '), text, extra));
  }
}

/** One problem of a rejected save, in words: the field's label, what is wrong, and the error path. */
export interface Problem {
  label: string;
  text: string;
  path: string;
}

/** The problems of a rejected save as a list; each item is a button that
 * focuses its field (the element with data-path = the normalized path, else
 * its parent path's). */
export function problemList(root: HTMLElement, problems: Problem[], testid: string): HTMLElement | null {
  if (!problems.length) return null;
  const focus = (p: string) => {
    const parts = normalizePath(p).split('.');
    for (let n = parts.length; n > 0; n--) {
      const el = root.querySelector<HTMLElement>(`[data-path="${CSS.escape(parts.slice(0, n).join('.'))}"]`);
      if (el) return el.focus();
    }
  };
  return h(
    'ul',
    { class: 'error-list', 'data-testid': `${testid}-list` },
    problems.map((e) =>
      h('li', null, h('button', { type: 'button', class: 'link-btn', title: `Go to ${e.label} (${e.path})`, 'data-testid': testid, dataset: { path: normalizePath(e.path) }, onclick: () => focus(e.path) }, h('strong', null, e.label), ': ', e.text)),
    ),
  );
}

/** The details of an ApiError with this code when they are a list (the server's field errors), else null. */
export function fieldDetails<T>(e: unknown, code: string): T[] | null {
  return e instanceof ApiError && e.code === code && Array.isArray(e.details) ? (e.details as T[]) : null;
}

/** The green "saved" note; small unless told otherwise. */
export function savedNote(testid: string | undefined, body: Child, small = true): HTMLElement {
  return h('div', { class: ['alert', 'tone-ok', small ? 'small' : ''], role: 'status', tabindex: '-1', 'data-testid': testid }, icon('check'), h('div', null, body));
}

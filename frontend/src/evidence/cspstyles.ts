// xterm.js's DOM renderer writes its CSS (row dimensions, theme colours,
// the scrollbar) into <style> elements it creates inside the terminal.
// The app's Content-Security-Policy (style-src 'self', no
// 'unsafe-inline') blocks every inline <style> (and reports each one),
// which would leave the terminal uncoloured and mis-sized. Rather than
// weaken the policy:
//
// - withInertStyles() runs xterm.js code (Terminal.open) while
//   document.createElement('style') returns an inert, hidden element whose
//   textContent feeds a constructable stylesheet adopted by the document
//   (CSSOM, which the policy allows). xterm.js only ever sets textContent
//   on these elements and removes them, so nothing else is needed.
// - StyleMirror is the fallback for a real <style> created later: it
//   copies its text into an adopted sheet the same way.

/** The adopted sheets of inert style elements, so a player can drop its
 * own on dispose. */
export type SheetSet = Set<CSSStyleSheet>;

/** Whether the browser has constructable, adoptable stylesheets (every
 * current engine; without them xterm.js's own <style> elements are left
 * alone and the policy decides). */
export function canAdopt(doc: Document): boolean {
  try {
    return 'adoptedStyleSheets' in doc && typeof new CSSStyleSheet().replaceSync === 'function';
  } catch {
    return false;
  }
}

function adopt(doc: Document, sheet: CSSStyleSheet): void {
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
}

function drop(doc: Document, sheets: Iterable<CSSStyleSheet>): void {
  const gone = new Set(sheets);
  doc.adoptedStyleSheets = doc.adoptedStyleSheets.filter((s) => !gone.has(s));
}

/** Runs fn with document.createElement('style') returning inert elements
 * backed by constructable stylesheets (recorded in sheets). */
export function withInertStyles<T>(doc: Document, sheets: SheetSet, fn: () => T): T {
  if (!canAdopt(doc)) return fn();
  const own = Object.prototype.hasOwnProperty.call(doc, 'createElement');
  const original = doc.createElement;
  const create = original.bind(doc) as (tag: string, opts?: ElementCreationOptions) => HTMLElement;
  (doc as { createElement: unknown }).createElement = (tag: string, opts?: ElementCreationOptions) => {
    if (String(tag).toLowerCase() !== 'style') return create(tag, opts);
    const el = create('gatehouse-style');
    el.hidden = true;
    const sheet = new CSSStyleSheet();
    sheets.add(sheet);
    adopt(doc, sheet);
    let text = '';
    Object.defineProperty(el, 'textContent', {
      get: () => text,
      set: (v: unknown) => {
        text = v === null || v === undefined ? '' : String(v);
        sheet.replaceSync(text);
      },
    });
    const remove = el.remove.bind(el);
    el.remove = () => {
      remove();
      sheets.delete(sheet);
      drop(doc, [sheet]);
    };
    return el;
  };
  try {
    return fn();
  } finally {
    if (own) (doc as { createElement: unknown }).createElement = original;
    else delete (doc as { createElement?: unknown }).createElement;
  }
}

/** Removes the sheets of inert style elements from the document. */
export function dropSheets(doc: Document, sheets: SheetSet): void {
  if (!sheets.size) return;
  drop(doc, sheets);
  sheets.clear();
}

/** Mirrors real <style> elements under root into adopted sheets. */
export class StyleMirror {
  private readonly sheets = new Map<HTMLStyleElement, { sheet: CSSStyleSheet; text: string }>();
  private readonly observer: MutationObserver;

  constructor(private readonly root: HTMLElement) {
    this.observer = new MutationObserver(() => this.sync());
    if (!canAdopt(root.ownerDocument)) return;
    this.observer.observe(root, { subtree: true, childList: true, characterData: true });
    this.sync();
  }

  /** Mirrors the current <style> elements under the root. */
  sync(): void {
    const doc = this.root.ownerDocument;
    const present = new Set(this.root.querySelectorAll('style'));
    for (const [el, m] of this.sheets) {
      if (present.has(el)) continue;
      drop(doc, [m.sheet]);
      this.sheets.delete(el);
    }
    for (const el of present) {
      const text = el.textContent ?? '';
      let m = this.sheets.get(el);
      if (!m) {
        m = { sheet: new CSSStyleSheet(), text: '' };
        this.sheets.set(el, m);
        adopt(doc, m.sheet);
      }
      if (m.text !== text) {
        m.sheet.replaceSync(text);
        m.text = text;
      }
    }
  }

  /** Stops mirroring and removes the mirrored sheets. */
  dispose(): void {
    this.observer.disconnect();
    if (!this.sheets.size) return;
    drop(this.root.ownerDocument, [...this.sheets.values()].map((m) => m.sheet));
    this.sheets.clear();
  }
}

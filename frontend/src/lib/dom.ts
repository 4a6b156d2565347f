// A tiny DOM helper instead of a UI framework.
//
// Why: the UI is a handful of views that mostly show server state and
// re-render small regions on events. A framework would add more bytes and
// more moving parts than it saves, and this tool's UI must be easy to audit.
// `h()` builds real elements and only ever sets text through textContent or
// attributes, so data from agents and skill bundles cannot become markup;
// the one deliberate exception is the sanitized Markdown of SKILL.md
// (see views/skills.ts). Every text child, `text` prop and attribute value
// goes through visible.ts: control, bidi and invisible characters show as
// ⟨U+XXXX⟩, never interpreted.

import { visibleNode, visibleString } from './visible';

type Child = Node | string | number | null | undefined | false | Child[];

type Props = {
  class?: string | (string | false | null | undefined)[];
  style?: string;
  dataset?: Record<string, string>;
  text?: string;
} & { [attr: string]: unknown };

/** Creates an element. Props starting with `on` are event listeners;
 * `true`/`false` toggle boolean attributes; `value`/`checked` are set as
 * properties. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props?: Props | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') {
        el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : String(v);
      } else if (k === 'dataset') {
        Object.assign(el.dataset, v as Record<string, string>);
      } else if (k === 'text') {
        el.replaceChildren(visibleNode(String(v)));
      } else if (k.startsWith('on') && typeof v === 'function') {
        el.addEventListener(k.slice(2).toLowerCase(), v as EventListener);
      } else if (k === 'value' || k === 'checked' || k === 'indeterminate') {
        (el as unknown as Record<string, unknown>)[k] = v;
      } else if (v === true) {
        el.setAttribute(k, '');
      } else {
        el.setAttribute(k, visibleString(String(v)));
      }
    }
  }
  append(el, children);
  return el;
}

function append(parent: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(parent, c);
    else parent.appendChild(typeof c === 'string' || typeof c === 'number' ? visibleNode(String(c)) : c);
  }
}

/** Replaces an element's children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** An inline SVG icon from a fixed, trusted set (never from data). */
export function icon(name: keyof typeof ICONS, label?: string): SVGSVGElement {
  return svgGlyph(ICONS[name], 'icon', label);
}

/**
 * An inline 16×16 SVG drawn at 14 px from fixed, trusted path data (never
 * from data), with class cls: labelled for assistive technology when label
 * is given, hidden from it otherwise. icon() and the filled glyphs of
 * evidence/icons.ts are made here.
 */
export function svgGlyph(paths: readonly string[], cls: string, label?: string): SVGSVGElement {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '14');
  svg.setAttribute('height', '14');
  svg.setAttribute('class', cls);
  if (label) {
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', label);
  } else {
    svg.setAttribute('aria-hidden', 'true');
  }
  for (const d of paths) {
    const p = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    p.setAttribute('d', d);
    svg.appendChild(p);
  }
  return svg;
}

const ICONS = {
  copy: ['M5.5 2.5h6a1 1 0 0 1 1 1v7', 'M3.5 5.5h6a1 1 0 0 1 1 1v6a1 1 0 0 1-1 1h-6a1 1 0 0 1-1-1v-6a1 1 0 0 1 1-1z'],
  check: ['M3 8.5l3 3 7-7'],
  sun: [
    'M8 5a3 3 0 1 1 0 6a3 3 0 0 1 0-6z',
    'M8 1v2M8 13v2M1 8h2M13 8h2M3 3l1.4 1.4M11.6 11.6L13 13M3 13l1.4-1.4M11.6 4.4L13 3',
  ],
  moon: ['M13 9.5A5.5 5.5 0 0 1 6.5 3a5.5 5.5 0 1 0 6.5 6.5z'],
  skills: ['M3 2.5h7l3 3v8h-10z', 'M10 2.5v3h3', 'M5.5 8.5h5M5.5 11h5'],
  runs: ['M2.5 4h11M2.5 8h11M2.5 12h7'],
  shield: ['M8 1.5l5.5 2v4c0 3.5-2.5 6-5.5 7c-3-1-5.5-3.5-5.5-7v-4z', 'M5.5 8l2 2 3-3.5'],
  warn: ['M8 2l6.5 11.5h-13z', 'M8 6.5v3.5M8 11.8v.2'],
  x: ['M4 4l8 8M12 4l-8 8'],
  up: ['M8 12.5v-9M4.5 7L8 3.5 11.5 7'],
  down: ['M8 3.5v9M4.5 9L8 12.5 11.5 9'],
  swap: ['M2.5 5.5h11M10.5 2.5l3 3-3 3', 'M13.5 10.5h-11M5.5 7.5l-3 3 3 3'],
  plus: ['M8 3v10M3 8h10'],
  back: ['M12.5 8h-9M7 4.5L3.5 8 7 11.5'],
  evidence: ['M2.5 3.5h11v9h-11z', 'M4.5 6.5l2 1.5-2 1.5', 'M8 10h3.5'],
  compare: ['M2.5 3h4.5v10h-4.5z', 'M9 3h4.5v10h-4.5z', 'M4 6h1.5M4 8.5h1.5M10.5 6h1.5M10.5 8.5h1.5'],
  bell: ['M4 11.5V7a4 4 0 0 1 8 0v4.5l1 1H3z', 'M6.5 14a1.5 1.5 0 0 0 3 0'],
  bellOff: ['M4 11.5V7a4 4 0 0 1 8 0v4.5l1 1H3z', 'M6.5 14a1.5 1.5 0 0 0 3 0', 'M2.5 2.5l11 11'],
} as const;

/** Deterministic ids for label/for pairs. */
let nextId = 0;
export function uid(prefix = 'f'): string {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

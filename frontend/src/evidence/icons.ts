// The play and pause glyphs shared by the replay controls and the compare
// view's synchronized controls (filled paths; lib/dom.ts's icons are
// stroked outlines).

function svg(d: string): SVGSVGElement {
  const s = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  s.setAttribute('viewBox', '0 0 16 16');
  s.setAttribute('width', '14');
  s.setAttribute('height', '14');
  s.setAttribute('class', 'icon filled');
  s.setAttribute('aria-hidden', 'true');
  const p = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  p.setAttribute('d', d);
  s.append(p);
  return s;
}

/** A new play glyph. */
export const playIcon = (): SVGSVGElement => svg('M4.5 2.8v10.4a.6.6 0 0 0 .9.5l8.2-5.2a.6.6 0 0 0 0-1L5.4 2.3a.6.6 0 0 0-.9.5z');
/** A new pause glyph. */
export const pauseIcon = (): SVGSVGElement => svg('M4 2.5h2.6v11H4zM9.4 2.5H12v11H9.4z');

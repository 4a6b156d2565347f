// The play and pause glyphs shared by the replay controls and the compare
// view's synchronized controls (filled paths; lib/dom.ts's icons are
// stroked outlines).

import { svgGlyph } from '../lib/dom';

const svg = (d: string): SVGSVGElement => svgGlyph([d], 'icon filled');

/** A new play glyph. */
export const playIcon = (): SVGSVGElement => svg('M4.5 2.8v10.4a.6.6 0 0 0 .9.5l8.2-5.2a.6.6 0 0 0 0-1L5.4 2.3a.6.6 0 0 0-.9.5z');
/** A new pause glyph. */
export const pauseIcon = (): SVGSVGElement => svg('M4 2.5h2.6v11H4zM9.4 2.5H12v11H9.4z');

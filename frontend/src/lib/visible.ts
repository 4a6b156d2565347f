// Untrusted text (bundle names, descriptions, paths; agent names and
// invocation strings) is shown with its control, bidirectional and
// invisible characters made visible as ⟨U+XXXX⟩, never interpreted
// (docs: the consent dialog contract). The Go side applies the same set
// for terminals (app/visible.go). dom.ts routes every text child and
// attribute through here, so no view can forget it.

// Controls (C0/C1), format characters (bidi marks, embeddings, overrides,
// isolates, zero-width space/joiners, word joiner, BOM, tag characters),
// line/paragraph separators, blank fillers, and lone surrogates. Newline
// and tab are kept: pre blocks lay them out and elsewhere they are white
// space.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\u034F\u115F\u1160\u3164\uFFA0]/u;
const HIDDEN_ALL = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\u034F\u115F\u1160\u3164\uFFA0]/gu;

function kept(ch: string): boolean {
  return ch === '\n' || ch === '\t';
}

/** The marker for one hidden character: ⟨U+202E⟩. */
export function marker(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return `⟨U+${cp.toString(16).toUpperCase().padStart(4, '0')}⟩`;
}

/** s with every hidden character (newline and tab kept) as its marker. */
export function visibleString(s: string): string {
  if (!HIDDEN.test(s)) return s;
  return s.replace(HIDDEN_ALL, (ch) => (kept(ch) ? ch : marker(ch)));
}

/** s as DOM nodes: plain text, with each hidden character as a marked-up
 * span showing its marker (so it stands out from text that merely looks
 * like one). */
export function visibleNode(s: string): Node {
  if (!HIDDEN.test(s)) return document.createTextNode(s);
  const frag = document.createDocumentFragment();
  let last = 0;
  for (const m of s.matchAll(HIDDEN_ALL)) {
    const ch = m[0];
    if (kept(ch)) continue;
    const at = m.index ?? 0;
    if (at > last) frag.appendChild(document.createTextNode(s.slice(last, at)));
    const span = document.createElement('span');
    span.className = 'hidden-char';
    span.title = 'invisible or control character in the original text';
    span.textContent = marker(ch);
    frag.appendChild(span);
    last = at + ch.length;
  }
  if (last < s.length) frag.appendChild(document.createTextNode(s.slice(last)));
  return frag;
}

/** Makes visible every text node below root (for markup built elsewhere,
 * such as the sanitized Markdown of SKILL.md). */
export function makeTextVisible(root: Node): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (HIDDEN.test((n as Text).data)) texts.push(n as Text);
  for (const t of texts) t.replaceWith(visibleNode(t.data));
}

// SKILL.md bodies come from skill bundles, i.e. from anyone: render them
// with marked, then sanitize with DOMPurify before they touch the DOM.
// On top of DOMPurify's defaults: no inline styles, no forms, no embedded
// content, and no network requests at all (images become their alt text;
// only absolute http(s)/mailto links stay links and open outside the app).

import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const md = new Marked({ gfm: true, breaks: false, async: false });

let hooked = false;
function installHooks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('uponSanitizeElement', (node, data) => {
    if (data.tagName === 'img' && node instanceof Element) {
      const alt = node.getAttribute('alt') || 'image';
      const span = node.ownerDocument.createElement('span');
      span.className = 'md-image';
      span.textContent = `[image: ${alt}]`;
      node.replaceWith(span);
    }
  });
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node instanceof Element && node.tagName === 'A') {
      const href = node.getAttribute('href') ?? '';
      if (/^(https?:|mailto:)/i.test(href)) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
        node.setAttribute('title', href);
      } else {
        // Relative links point into the bundle; there is nothing to open.
        node.removeAttribute('href');
        if (href) node.setAttribute('title', href);
        node.classList.add('md-ref');
      }
    }
  });
}

/** Markdown → sanitized HTML string. */
export function renderMarkdown(src: string): string {
  installHooks();
  const html = md.parse(src ?? '') as string;
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'video', 'audio', 'source', 'picture', 'svg', 'math', 'link', 'meta', 'base'],
    FORBID_ATTR: ['style', 'srcset', 'background', 'poster'],
    ALLOW_DATA_ATTR: false,
  });
}

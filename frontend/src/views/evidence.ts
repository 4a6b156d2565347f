// Evidence: the library of saved captures (#/evidence) and one capture's
// replay and panels (#/evidence/<evidence id>). The modules live in
// frontend/src/evidence/; the replay (xterm.js) loads on first use.

import { onEvent, onReconnect } from '../api/client';
import type { EvidenceDetail } from '../evidence/detail';
import { Library } from '../evidence/library';
import { h, replace } from '../lib/dom';
import { errorBox, loading } from '../lib/ui';
import type { View } from './view';

export function evidenceView(): View {
  const el = h('div', { class: 'page evidence-view' });
  const library = new Library();
  let detail: EvidenceDetail | null = null;
  let showing: 'library' | 'detail' | null = null;
  let opening = 0;

  const offReconnect = onReconnect(() => {
    if (showing === 'library') void library.load();
  });
  // Shared, unshared or deleted in another window.
  const offEvidence = onEvent('evidence', () => {
    if (showing === 'library') void library.load();
  });
  // A capture started from the app (any window) was saved.
  const offCapture = onEvent('capture', (e) => {
    if (e.state === 'done' && showing === 'library') void library.load();
  });

  return {
    el,
    title: 'Evidence',
    route(parts: string[]) {
      const id = parts[0] ? decodeURIComponent(parts[0]) : '';
      if (!id) {
        opening++;
        detail?.destroy();
        detail = null;
        if (showing !== 'library') replace(el, library.el);
        showing = 'library';
        void library.load();
        return;
      }
      if (detail && detail.id === id && showing === 'detail') return;
      detail?.destroy();
      detail = null;
      showing = 'detail';
      const want = ++opening;
      replace(el, loading('Loading the replay…'));
      import('../evidence/detail')
        .then(({ EvidenceDetail }) => {
          if (want !== opening || showing !== 'detail') return;
          detail = new EvidenceDetail(id);
          replace(el, detail.el);
          el.scrollTop = 0;
          void detail.load();
        })
        .catch((e) => {
          if (want === opening) replace(el, errorBox(e, 'Could not load the replay.'));
        });
    },
    destroy() {
      offReconnect();
      offEvidence();
      offCapture();
      detail?.destroy();
      library.destroy();
    },
  };
}

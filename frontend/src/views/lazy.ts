// lazyView lets the shell list a view whose module (and its dependencies,
// such as xterm.js for the compare view) loads only when the view is first
// opened, so the start-up bundle — which must show the consent dialog
// quickly — stays small. Vite turns the dynamic import into its own chunk.

import { h, replace } from '../lib/dom';
import { errorBox, loading } from '../lib/ui';
import type { View } from './view';

/** A View that loads the real one with load() and then delegates to it. */
export function lazyView(title: string, load: () => Promise<() => View>): () => View {
  return () => {
    const el = h('div', { class: 'lazy-view' }, loading(`Loading ${title}…`));
    let real: View | undefined;
    let lastRoute: string[] = [];
    let destroyed = false;
    const view: View = {
      el,
      title,
      route(parts) {
        lastRoute = parts;
        real?.route(parts);
      },
      destroy() {
        destroyed = true;
        real?.destroy();
      },
    };
    load().then(
      (make) => {
        if (destroyed) return;
        real = make();
        view.title = real.title;
        replace(el, real.el);
        real.route(lastRoute);
      },
      (err) => replace(el, errorBox(err, `The ${title} view could not be loaded:`)),
    );
    return view;
  };
}

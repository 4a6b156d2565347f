// The shell: header, left navigation, hash router, theme, connection
// indicator, and the consent dialog that floats over every view.

import './styles.css';
import { api, onConnection, onSessionLost, shellKind, type ConnectionState } from './api/client';
import { h, icon, replace } from './lib/dom';
import { visibleString } from './lib/visible';
import { initConsent, onPendingCount, showConsent, focusRequest } from './views/consent';
import { initAttention, setBaseTitle, setWaiting } from './attention/attention';
import { evidenceView } from './views/evidence';
import { lazyView } from './views/lazy';
import { runsView } from './views/runs';
import { securityView } from './views/security';
import { skillsView } from './views/skills';
import type { View } from './views/view';

// ---- theme --------------------------------------------------------------

const THEME_KEY = 'gatehouse.theme';
type Theme = 'light' | 'dark';
const media = window.matchMedia('(prefers-color-scheme: dark)');

function storedTheme(): Theme | null {
  try {
    const t = localStorage.getItem(THEME_KEY);
    return t === 'light' || t === 'dark' ? t : null;
  } catch {
    return null;
  }
}

function currentTheme(): Theme {
  return storedTheme() ?? (media.matches ? 'dark' : 'light');
}

function applyTheme(): void {
  const t = currentTheme();
  document.documentElement.dataset.theme = t;
  document.documentElement.style.colorScheme = t;
  const btn = document.querySelector<HTMLButtonElement>('[data-testid="theme-toggle"]');
  if (btn) {
    const next = t === 'dark' ? 'light' : 'dark';
    btn.replaceChildren(icon(t === 'dark' ? 'sun' : 'moon'));
    btn.setAttribute('aria-label', `Switch to ${next} theme`);
    btn.title = `Switch to ${next} theme${storedTheme() ? '' : ' (now following the system)'}`;
  }
}

function toggleTheme(): void {
  const next: Theme = currentTheme() === 'dark' ? 'light' : 'dark';
  try {
    // Back to "follow the system" when the choice matches it again.
    if (next === (media.matches ? 'dark' : 'light')) localStorage.removeItem(THEME_KEY);
    else localStorage.setItem(THEME_KEY, next);
  } catch {
    /* storage unavailable: the choice lasts for this page */
    document.documentElement.dataset.theme = next;
  }
  applyTheme();
}

media.addEventListener('change', applyTheme);
applyTheme();

// ---- shell --------------------------------------------------------------

type ViewName = 'skills' | 'runs' | 'evidence' | 'compare' | 'security';
const NAV: { name: ViewName; label: string; icon: 'skills' | 'runs' | 'evidence' | 'compare' | 'shield'; make: () => View }[] = [
  { name: 'skills', label: 'Skills', icon: 'skills', make: skillsView },
  { name: 'runs', label: 'Runs', icon: 'runs', make: runsView },
  { name: 'evidence', label: 'Evidence', icon: 'evidence', make: evidenceView },
  { name: 'compare', label: 'Compare', icon: 'compare', make: lazyView('Compare', () => import('./views/compare').then((m) => m.compareView)) },
  { name: 'security', label: 'Security', icon: 'shield', make: securityView },
];

const views = new Map<ViewName, View>();
const main = h('main', { id: 'main', class: 'main', tabindex: '-1' });
const dataDir = h('code', { class: 'mono datadir', title: 'Data directory', 'data-testid': 'data-dir' }, '');
const versionText = h('span', null, '');
const conn = h('span', { class: 'conn', role: 'status', 'aria-live': 'polite', hidden: true, 'data-testid': 'connection' });
const pendingBtn = h('button', { type: 'button', class: 'pending-btn', hidden: true, 'data-testid': 'pending-badge', onclick: () => showConsent() });
const sessionBanner = h('div', { class: 'session-banner', role: 'alert', hidden: true });
const navLinks = new Map<ViewName, HTMLAnchorElement>();

const nav = h(
  'nav',
  { class: 'sidenav', 'aria-label': 'Main' },
  h(
    'ul',
    null,
    NAV.map((n) => {
      const a = h('a', { href: `#/${n.name}`, class: 'nav-link', 'data-testid': `nav-${n.name}` }, icon(n.icon), h('span', null, n.label));
      navLinks.set(n.name, a);
      return h('li', null, a);
    }),
  ),
  // The data directory lives here, out of the header's prime spot (full path on hover and in Security).
  h('div', { class: 'nav-foot muted small' }, versionText, h('div', { class: 'datadir-row' }, h('span', null, 'Data: '), dataDir)),
);

const header = h(
  'header',
  { class: 'topbar' },
  h('a', { href: '#/skills', class: 'brand', 'aria-label': 'Gatehouse home' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, icon('shield')), h('span', { class: 'brand-name' }, 'Gatehouse')),
  h('span', { class: 'spacer' }),
  conn,
  pendingBtn,
  initAttention((id) => focusRequest(id)),
  h('button', { type: 'button', class: 'icon-btn theme-btn', 'data-testid': 'theme-toggle', onclick: toggleTheme }),
);

const appRoot = h('div', { id: 'app', class: 'app' }, h('a', { href: '#main', class: 'skip-link', onclick: (e: Event) => (e.preventDefault(), main.focus()) }, 'Skip to content'), header, sessionBanner, h('div', { class: 'frame' }, nav, main));
const modalHost = h('div', { id: 'modal-host', class: 'modal-host', hidden: true });

const mount = document.getElementById('root') ?? document.body;
replace(mount, appRoot, modalHost);
applyTheme();

// ---- router -------------------------------------------------------------

let currentView: ViewName | null = null;

function route(): void {
  const parts = location.hash.replace(/^#\/?/, '').split('/');
  let name = parts[0] as ViewName;
  if (!NAV.some((n) => n.name === name)) {
    name = 'skills';
    if (location.hash && location.hash !== '#main') history.replaceState(null, '', '#/skills');
  }
  let v = views.get(name);
  if (!v) {
    v = NAV.find((n) => n.name === name)!.make();
    views.set(name, v);
  }
  if (currentView !== name) {
    replace(main, v.el);
    currentView = name;
    navLinks.forEach((a, n) => {
      a.classList.toggle('active', n === name);
      if (n === name) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    });
  }
  setBaseTitle(`${v.title} · Gatehouse`);
  v.route(parts.slice(1).filter(Boolean));
}

window.addEventListener('hashchange', route);
route();

// ---- live state ---------------------------------------------------------

onConnection((s: ConnectionState) => {
  conn.hidden = s === 'open' || s === 'desktop';
  conn.className = `conn ${s}`;
  conn.textContent = s === 'reconnecting' ? 'Reconnecting…' : s === 'connecting' ? 'Connecting…' : '';
  conn.title = s === 'reconnecting' ? 'The live connection to Gatehouse dropped; retrying. Consent requests appear when it is back.' : '';
});

onSessionLost(() => {
  sessionBanner.hidden = false;
  replace(sessionBanner, icon('warn'), h('span', null, 'This browser has no valid Gatehouse session (none yet, or Gatehouse was restarted). Open the link printed by ', h('code', { class: 'mono' }, 'gatehouse serve'), ' to sign in.'));
});

onPendingCount((n) => {
  pendingBtn.hidden = n === 0;
  pendingBtn.textContent = n === 1 ? '1 request waiting' : `${n} requests waiting`;
  setWaiting(n);
});

initConsent(modalHost, appRoot);

api
  .AppInfo({})
  .then((info) => {
    // LRMs keep the leading slash in place inside the right-to-left
    // (ellipsis-at-the-start) box.
    // (The path itself is shown with its hidden characters visible.)
    dataDir.textContent = `\u200E${visibleString(info.dataDir)}\u200E`;
    dataDir.title = `Data directory: ${visibleString(info.dataDir)}`;
    versionText.textContent = `Gatehouse ${info.version} · ${info.shell === 'desktop' || shellKind() === 'desktop' ? 'desktop' : 'browser'}`;
  })
  .catch(() => {
    versionText.textContent = 'Gatehouse';
  });

// The shared harness of the end-to-end scripts (run.mjs, mcp.mjs,
// evidence.mjs, compare.mjs): temp directories, `gatehouse serve` on a
// fresh data directory, Debian's Chromium through playwright-core, the UI
// API, screenshots and polling.
//
// Importing this module checks the environment once: GATEHOUSE_BIN must be
// the absolute path of a test build (`go build -tags e2e`) and Chromium
// (GATEHOUSE_CHROMIUM, default /usr/bin/chromium) must exist, else the
// process exits with status 2. It also guarantees cleanup: every server
// startServer starts is killed (its whole process group) and every
// directory tempDir makes is removed when the process exits, also after a
// failure, SIGINT or SIGTERM.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

/** The frontend directory (the parent of e2e/). */
export const FRONTEND = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Where screenshots land: frontend/test-results/screenshots (created on import). */
export const SHOTS = path.join(FRONTEND, 'test-results', 'screenshots');
/** The absolute path of the gatehouse test build under test. */
export const BIN = process.env.GATEHOUSE_BIN;
/** The Chromium executable playwright-core drives. */
export const CHROMIUM = process.env.GATEHOUSE_CHROMIUM || '/usr/bin/chromium';
/** The longest any single observable wait may take, in ms. */
export const WAIT = 30_000;

if (!BIN || !path.isAbsolute(BIN) || !fs.existsSync(BIN)) {
  console.error('GATEHOUSE_BIN must be the absolute path of a test build (go build -tags e2e -o bin/gatehouse-e2e .)');
  process.exit(2);
}
if (!fs.existsSync(CHROMIUM)) {
  console.error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  process.exit(2);
}
fs.mkdirSync(SHOTS, { recursive: true });

// ---------------------------------------------------------------------------
// process bookkeeping: every server started is killed, every temp dir removed.

const liveServers = new Set();
const tempDirs = new Set();

/** Sends sig to the process group led by pid; a group already gone is not an error. */
export function killGroup(pid, sig) {
  try {
    process.kill(-pid, sig);
  } catch {
    /* already gone */
  }
}

process.on('exit', () => {
  for (const s of liveServers) killGroup(s.pid, 'SIGKILL');
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const s of liveServers) killGroup(s.pid, 'SIGKILL');
    process.exit(130); // runs the exit handler above: temp dirs go too
  });
}

/** Makes a fresh directory (mode 0700) under the OS temp dir and returns
 * its real path (symlinks resolved); it is removed when the process exits. */
export function tempDir(label) {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-e2e-${label}-`)));
  tempDirs.add(d);
  return d;
}

// ---------------------------------------------------------------------------
// the server

/**
 * Starts `gatehouse serve --addr 127.0.0.1:0 ...args` in its own process
 * group with a fresh data directory and HOME (XDG_DATA_HOME unset; `env`
 * is applied over both) and resolves once the access URL is printed and
 * has the expected form. On failure the server is stopped before the
 * promise rejects.
 *
 * Resolves to { url, origin, token, dataDir, home, proc, pid, stderr
 * (grows as the server writes), exited, exitCode, stop }; stop() sends
 * SIGTERM, waits for exit (SIGKILL after 10 s) and kills any straggler in
 * the group. A server never stopped does not keep the process alive and
 * is killed when it exits.
 */
export async function startServer({ label = 'srv', env = {}, args = [] } = {}) {
  const fullEnv = { ...process.env, HOME: tempDir(`${label}-home`), GATEHOUSE_DATA_DIR: tempDir(`${label}-data`), ...env };
  delete fullEnv.XDG_DATA_HOME;
  const proc = spawn(BIN, ['serve', '--addr', '127.0.0.1:0', ...args], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const srv = { pid: proc.pid, proc, dataDir: fullEnv.GATEHOUSE_DATA_DIR, home: fullEnv.HOME, stderr: '', exited: false, exitCode: null };
  liveServers.add(srv);
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (d) => (srv.stderr += d));
  const exited = new Promise((resolve) =>
    proc.on('exit', (code, signal) => {
      srv.exited = true;
      srv.exitCode = code ?? signal;
      resolve();
    }),
  );
  srv.stop = async () => {
    if (!srv.exited) {
      killGroup(srv.pid, 'SIGTERM');
      const t = setTimeout(() => killGroup(srv.pid, 'SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    }
    killGroup(srv.pid, 'SIGKILL'); // any straggler in the group
    liveServers.delete(srv);
  };
  try {
    const lines = readline.createInterface({ input: proc.stdout });
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server printed no URL within ${WAIT} ms; stderr:\n${srv.stderr}`)), WAIT);
      lines.once('line', (l) => {
        clearTimeout(timer);
        resolve(l.trim());
      });
      exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`server exited (${srv.exitCode}) before printing its URL; stderr:\n${srv.stderr}`));
      });
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]+$/, 'first stdout line is the access URL');
    const u = new URL(url);
    Object.assign(srv, { url, origin: u.origin, token: u.searchParams.get('token') });
  } catch (err) {
    await srv.stop();
    throw err;
  }
  proc.stdout.resume();
  // A server a test forgot to stop must not keep Node alive (the exit
  // handler above kills it); stop() and the URL wait hold their own timers.
  proc.unref();
  proc.stdout.unref();
  proc.stderr.unref();
  return srv;
}

/** Calls the UI API method from Node the way the person's browser does
 * (UI token and same Origin); asserts HTTP 200 and returns the body. */
export async function callApi(srv, method, args = {}) {
  const r = await fetch(`${srv.origin}/api/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${srv.token}`, Origin: srv.origin },
    body: JSON.stringify(args),
  });
  const body = await r.json();
  assert.equal(r.status, 200, `${method} answered HTTP ${r.status}: ${JSON.stringify(body)}`);
  return body;
}

/** Calls the UI API method from inside the page (the token the page keeps
 * in sessionStorage, as a bearer header, and its Origin, as the UI does);
 * asserts HTTP 200 and returns the body. */
export async function pageApi(page, method, args = {}) {
  const res = await page.evaluate(
    async ({ method, args }) => {
      const token = sessionStorage.getItem('gatehouse.token');
      const headers = { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) };
      const r = await fetch('/api/' + method, { method: 'POST', credentials: 'omit', headers, body: JSON.stringify(args) });
      return { status: r.status, body: await r.json() };
    },
    { method, args },
  );
  assert.equal(res.status, 200, `${method} answered HTTP ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The operator-policy environment that enables process capture of
 * executables under /bin and /usr/bin in the working root `work`, with
 * external network allowed; `extra` is applied over it. */
export function captureEnv(work, extra = {}) {
  return {
    GATEHOUSE_PROCESS_CAPTURE_ENABLED: 'true',
    GATEHOUSE_PROCESS_EXECUTABLE_ROOTS_JSON: '["/bin","/usr/bin"]',
    GATEHOUSE_PROCESS_WORKING_ROOTS_JSON: JSON.stringify([work]),
    GATEHOUSE_PROCESS_ALLOW_EXTERNAL_NETWORK: 'true',
    ...extra,
  };
}

// ---------------------------------------------------------------------------
// the browser

const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * Launches headless Chromium on a fresh profile (a tempDir named after
 * `label`) at 1280×800 with WAIT as the default action and navigation
 * timeout; other options go to launchPersistentContext. Resolves to
 * { context, page, pageErrors, consoleErrors }, the last two filled by the
 * page's uncaught errors and console.error messages. The caller closes
 * the context.
 */
export async function openBrowser({ label = 'profile', ...options } = {}) {
  const context = await chromium.launchPersistentContext(tempDir(label), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: CHROMIUM_ARGS,
    ...options,
  });
  context.setDefaultTimeout(WAIT);
  context.setDefaultNavigationTimeout(WAIT);
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors = [];
  const consoleErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e?.stack || e)));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  return { context, page, pageErrors, consoleErrors };
}

/** Opens the server's access URL (the page moves its token into
 * sessionStorage and drops it from the address bar) and waits until the
 * app's navigation is drawn. */
async function gotoApp(page, srv) {
  await page.goto(srv.url);
  await page.getByTestId('nav-runs').waitFor();
}

/** openBrowser, then the app of `srv` open and ready; the context is
 * closed if the app does not come up. The caller closes it otherwise. */
export async function openApp(srv, options = {}) {
  const app = await openBrowser(options);
  try {
    await gotoApp(app.page, srv);
  } catch (err) {
    await app.context.close().catch(() => {});
    throw err;
  }
  return app;
}

/**
 * Runs body({ srv, page, context, pageErrors, consoleErrors }) against a
 * fresh server (startServer with `server` options, label `name`) and the
 * app open in a fresh browser (openBrowser with `browser` options), then
 * asserts that the page threw no uncaught error. On failure it writes
 * SHOTS/<name>-FAILED.png and prints the server's stderr and the page's
 * errors; either way the browser is closed and the server stopped.
 */
export async function withApp({ name, server = {}, browser = {} }, body) {
  const srv = await startServer({ label: name, ...server });
  let app;
  try {
    app = await openBrowser({ label: `${name}-profile`, ...browser });
    await gotoApp(app.page, srv);
    await body({ srv, ...app });
    assert.deepEqual(app.pageErrors, [], 'no uncaught errors in the page');
  } catch (err) {
    if (app) {
      const file = path.join(SHOTS, `${name}-FAILED.png`);
      await app.page
        .screenshot({ path: file, fullPage: true, timeout: 10_000 })
        .then(() => console.error(`[${name}] failure screenshot: ${path.relative(FRONTEND, file)}`))
        .catch((e) => console.error(`[${name}] could not take a failure screenshot: ${e.message}`));
      if (app.pageErrors.length) console.error(`[${name}] page errors:\n  ${app.pageErrors.join('\n  ')}`);
      if (app.consoleErrors.length) console.error(`[${name}] console errors:\n  ${app.consoleErrors.join('\n  ')}`);
    }
    console.error(`----- [${name}] server stderr -----\n${srv.stderr.trimEnd()}\n----- end of server stderr -----`);
    throw err;
  } finally {
    await app?.context.close().catch(() => {});
    await srv.stop();
  }
}

// ---------------------------------------------------------------------------
// screenshots and waiting

/** Writes SHOTS/<name>.png (full page unless told) and returns its path;
 * `show` (a locator) is scrolled into view first, since the app scrolls
 * inside its panes rather than the document. */
export async function screenshot(page, name, { show, fullPage = true } = {}) {
  const file = path.join(SHOTS, `${name}.png`);
  // A view may re-render the shown element (a settings event echoing the
  // save that produced it): the locator then finds the new one on retry.
  for (let i = 0; show; i++) {
    try {
      await show.scrollIntoViewIfNeeded();
      break;
    } catch (err) {
      if (i >= 3 || !/not attached/.test(String(err))) throw err;
    }
  }
  await page.screenshot({ path: file, fullPage });
  return file;
}

/** Removes the screenshots whose names start with `prefix` (a test's old shots). */
export function clearShots(prefix) {
  for (const f of fs.readdirSync(SHOTS)) if (f.startsWith(prefix) && f.endsWith('.png')) fs.rmSync(path.join(SHOTS, f));
}

/** Polls fn() every `interval` ms until it returns a truthy value, which
 * it resolves to (an observable condition, never a fixed sleep); rejects
 * after `timeout` ms naming `what` and the last value or error. */
export async function until(what, fn, timeout = WAIT, interval = 50) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** Switches the app to the `theme` ("light" or "dark") with its toggle
 * and waits until the document carries it. */
export async function setTheme(page, theme) {
  const now = await page.evaluate(() => document.documentElement.dataset.theme);
  if (now !== theme) await page.getByTestId('theme-toggle').click();
  await until(`theme ${theme}`, () => page.evaluate((t) => document.documentElement.dataset.theme === t, theme));
}

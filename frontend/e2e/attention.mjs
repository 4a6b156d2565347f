// End-to-end test of getting the person's attention in browser mode, in
// Debian's Chromium against a real `gatehouse serve`:
// - a request that arrives while the page is not focused puts
//   "(N) Approval needed" in the tab title and, with the notification
//   permission granted, calls the browser's Notification API saying which
//   agent asks to run what; clicking the notification shows that request;
// - the header's bell turns notifications off (a stored setting): the next
//   request calls nothing;
// - two windows on one app: deciding in one turns the other's card into a
//   short notice instead of a stale modal;
// - a request already waiting when a window opens in the background is
//   notified there once (not while notifications are off), and clicking
//   that notification shows it.
//
// Focus: headless Chromium reports every page as focused, so the test
// tells the page whether it is focused (document.hasFocus is replaced by
// an init script); the Notification constructor is wrapped to record each
// call and then calls the real one.
//
// Order: the server reports a decision twice, as the run journal's
// `decided` step and as a `proposal` event, from two goroutines in no
// fixed order. The init script holds every non-`raised` `proposal` event
// of the event stream back for a moment, so the journal's report always
// arrives first: the order that, about one run in three, left the other
// window's card in place with no notice.
//
//   cd frontend && GATEHOUSE_BIN=/abs/path/bin/gatehouse-e2e node e2e/attention.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callApi, openBrowser, startServer, tempDir, until, WAIT } from './harness.mjs';

const INIT = () => {
  // Focused unless the page's own init script said otherwise (in either order).
  if (window.__focused === undefined) window.__focused = true;
  document.hasFocus = () => window.__focused;
  window.__notifications = [];
  const Real = window.Notification;
  if (Real) {
    const Recording = function (title, options) {
      const n = new Real(title, options);
      window.__notifications.push({ title, body: options?.body ?? '', tag: options?.tag ?? '', n });
      return n;
    };
    Object.defineProperty(Recording, 'permission', { get: () => Real.permission });
    Recording.requestPermission = (...a) => Real.requestPermission(...a);
    window.Notification = Recording;
  }
  const realFetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const res = await realFetch(input, init);
    const url = typeof input === 'string' ? input : input.url;
    if (!url.endsWith('/api/events') || !res.ok || !res.body) return res;
    const dec = new TextDecoder();
    const enc = new TextEncoder();
    let buf = '';
    const body = res.body.pipeThrough(
      new TransformStream({
        transform(chunk, ctl) {
          buf += dec.decode(chunk, { stream: true });
          let end;
          while ((end = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, end + 2);
            buf = buf.slice(end + 2);
            if (block.startsWith('event: proposal\n') && !block.includes('"type":"raised"')) {
              setTimeout(() => {
                try {
                  ctl.enqueue(enc.encode(block));
                } catch {
                  /* the stream ended meanwhile */
                }
              }, 400);
            } else ctl.enqueue(enc.encode(block));
          }
        },
      }),
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
};

async function openWindow(context, srv, { background = false } = {}) {
  const page = await context.newPage();
  if (background) await page.addInitScript(() => (window.__focused = false)); // opens in the background
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e?.stack || e)));
  await page.goto(srv.url);
  await page.getByTestId('nav-runs').waitFor();
  return { page, errors };
}

function startRun(srv, text) {
  return callApi(srv, 'StartRun', { skill: 'text-metrics', input: JSON.stringify({ text }), workspace: tempDir('attention-ws') });
}

const notifications = (page) => page.evaluate(() => window.__notifications.map(({ title, body, tag }) => ({ title, body, tag })));

test('attention in browser mode: tab title, notifications, the setting, two windows', { timeout: 180_000 }, async () => {
  const srv = await startServer({ label: 'attention' });
  const { context } = await openBrowser({ label: 'attention-profile' });
  try {
    await context.grantPermissions(['notifications'], { origin: srv.origin });
    await context.addInitScript(INIT);
    const a = await openWindow(context, srv);
    const b = await openWindow(context, srv);
    assert.doesNotMatch(await a.page.title(), /Approval needed/, 'no count while nothing waits');

    // 1. Window A is in the background when the request arrives.
    await a.page.evaluate(() => (window.__focused = false));
    const { runId } = await startRun(srv, 'first request');
    await until('the tab title count', async () => /^\(1\) Approval needed · /.test(await a.page.title()));
    assert.match(await b.page.title(), /^\(1\) Approval needed · Skills · Gatehouse$/, 'every window counts');
    const [n1] = await until('a Notification call', async () => {
      const got = await notifications(a.page);
      return got.length ? got : null;
    });
    assert.match(n1.title, /Approval needed: text-metrics/, `title says what: ${n1.title}`);
    assert.match(n1.body, /Agent “.+” asks to run the skill “text-metrics”/, `body says who asks for what: ${n1.body}`);
    assert.deepEqual(await notifications(b.page), [], 'the focused window does not notify');
    const first = await until('the first request', async () => (await callApi(srv, 'PendingProposals')).proposals.find((p) => p.runId === runId));

    // A second request; the click on the first one's notification shows the first.
    await startRun(srv, 'second request');
    await until('two waiting', async () => /^\(2\) Approval needed/.test(await a.page.title()));
    await a.page.getByText('2 of 2').or(a.page.getByTestId('consent-queue')).first().waitFor();
    await a.page.evaluate(() => window.__notifications[0].n.onclick?.(new Event('click')));
    await until('the clicked request shown', async () => (await a.page.getByTestId('consent-dialog').getAttribute('data-proposal-id')) === first.id);

    // 2. Two windows: A denies the first request; B's card becomes a notice.
    const bDialog = b.page.locator(`[data-testid="consent-dialog"][data-proposal-id="${first.id}"]`);
    await b.page.getByTestId('consent-dialog').waitFor();
    if (!(await bDialog.count())) await b.page.getByRole('button', { name: 'Previous request' }).click();
    await bDialog.waitFor();
    await a.page.evaluate(() => (window.__focused = true));
    await a.page.getByTestId('consent-deny').click();
    await a.page.locator('[data-testid="consent-state"][data-state="denied"]').waitFor();
    const note = b.page.getByTestId('notice').filter({ hasText: 'was denied in another window' });
    await note.waitFor({ timeout: WAIT });
    assert.match(await note.innerText(), /The request to run “text-metrics” was denied in another window\./);
    await until('B no longer shows the decided card', async () => (await bDialog.count()) === 0);
    assert.equal(await a.page.getByTestId('notice').count(), 0, 'the deciding window shows no notice');
    await until('one waiting', async () => /^\(1\) Approval needed/.test(await b.page.title()));

    // 3. The setting: the bell turns notifications off; the next request calls nothing.
    const second = (await callApi(srv, 'PendingProposals')).proposals[0];
    await callApi(srv, 'Decide', { proposalId: second.id, approve: false });
    await until('nothing waiting', async () => !/Approval needed/.test(await a.page.title()));
    await a.page.keyboard.press('Escape').catch(() => {});
    const bell = a.page.getByTestId('notifications-toggle');
    assert.equal(await bell.getAttribute('aria-pressed'), 'true');
    await a.page.evaluate(() => document.querySelectorAll('[data-testid="consent-close"]').forEach((b) => b.click()));
    await bell.click();
    await until('the setting saved', async () => (await callApi(srv, 'GetAttention')).notifications === false);
    await until('A shows the setting it saved', async () => (await bell.getAttribute('aria-pressed')) === 'false');
    assert.equal(await bell.locator('svg.icon[aria-hidden="true"] path').count(), 3, 'the bell off is struck through');
    await until('B follows the setting', async () => (await b.page.getByTestId('notifications-toggle').getAttribute('aria-pressed')) === 'false');
    const before = (await notifications(a.page)).length;
    await a.page.evaluate(() => (window.__focused = false));
    await startRun(srv, 'third request');
    await until('the third request counted', async () => /^\(1\) Approval needed/.test(await a.page.title()));
    assert.equal((await notifications(a.page)).length, before, 'no Notification call while turned off');

    // 4. A request already waiting when a window opens in the background
    // is notified there once (nobody may have seen it yet), but not while
    // notifications are off; clicking that notification shows it.
    const third = (await callApi(srv, 'PendingProposals')).proposals[0];
    const d = await openWindow(context, srv, { background: true });
    await until('D counts the waiting request', async () => /^\(1\) Approval needed/.test(await d.page.title()));
    await d.page.getByTestId('consent-dialog').waitFor();
    assert.equal(await d.page.getByTestId('notifications-toggle').getAttribute('aria-pressed'), 'false');
    assert.deepEqual(await notifications(d.page), [], 'no notification at open while turned off');
    await callApi(srv, 'SetAttention', { notifications: true });
    await until('A follows the setting back on', async () => (await bell.getAttribute('aria-pressed')) === 'true');
    assert.equal(await bell.locator('svg.icon[aria-hidden="true"] path').count(), 2, 'the bell on is not struck through');
    const c = await openWindow(context, srv, { background: true });
    const [n3] = await until('a notification at open for the waiting request', async () => {
      const got = await notifications(c.page);
      return got.length ? got : null;
    });
    assert.equal(n3.tag, `gatehouse-${third.id}`, 'the notification is about the waiting request');
    assert.match(n3.body, /asks to run the skill “text-metrics”/);
    await c.page.evaluate(() => window.__notifications[0].n.onclick?.(new Event('click')));
    await until('C shows the clicked request', async () => (await c.page.getByTestId('consent-dialog').getAttribute('data-proposal-id')) === third.id);
    assert.equal((await notifications(c.page)).length, 1, 'one notification per request per window');
    assert.equal((await notifications(a.page)).length, before, 'a window that already counted the request does not notify it again');
    assert.deepEqual([...a.errors, ...b.errors, ...c.errors, ...d.errors], [], 'no uncaught errors in the pages');
  } finally {
    await context.close().catch(() => {});
    await srv.stop();
  }
});

// End-to-end tests of the Gatehouse web UI.
//
// Drives the real built UI (embedded in a test build of the Go binary) in
// Debian's Chromium through playwright-core, against `gatehouse serve` on a
// fresh data directory per test group (server, browser and cleanup come
// from harness.mjs).
//
//   cd frontend && GATEHOUSE_BIN=/abs/path/bin/gatehouse-e2e node e2e/run.mjs
//
// Build first (the UI is embedded in the binary):
//   cd frontend && npm run build && cd .. && go build -tags e2e -o bin/gatehouse-e2e .
//
// Screenshots land in frontend/test-results/screenshots/<test>-<step>.png.
// A failing test also writes <test>-FAILED.png and prints the server's
// stderr and the page's console errors.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { BIN, SHOTS, clearShots, pageApi, screenshot, tempDir, until, withApp } from './harness.mjs';

const TEST_TIMEOUT = 180_000;
const SKILL = 'text-metrics';
const INPUT = '{"text":"one two three"}';

// ---------------------------------------------------------------------------
// test groups

const results = [];
const started = Date.now();

/** One test group: its own server (fresh data dir, consent window
 * opts.consentWindow or 5m), its own browser profile, screenshots on the
 * way, diagnostics on failure, and nothing left running afterwards. */
function group(name, opts, body) {
  test(name, { timeout: TEST_TIMEOUT }, async () => {
    const t0 = Date.now();
    clearShots(`${name}-`); // this test's old shots
    let ok = false;
    try {
      const server = { args: ['--test-consent-window', opts.consentWindow ?? '5m'] };
      await withApp({ name, server }, async ({ srv, page }) => {
        assert.equal(new URL(page.url()).pathname, '/', 'the token URL redirects to /');
        await page.locator('#app, body').first().waitFor();
        await body({ srv, page, shot: (step, show) => shot(page, name, step, show), api: (method, args) => pageApi(page, method, args) });
      });
      ok = true;
    } finally {
      results.push({ name, ok, ms: Date.now() - t0 });
    }
  });
}

// The summary is printed last, after the test reporter's own output.
process.on('exit', () => {
  const failed = results.filter((r) => !r.ok);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  console.log('');
  for (const r of results) console.log(`  ${r.ok ? 'PASS' : 'FAIL'}  ${r.name}  (${(r.ms / 1000).toFixed(1)} s)`);
  console.log(
    `e2e summary: ${results.length - failed.length}/${results.length} passed, ${failed.length} failed, ${secs} s` +
      (failed.length ? ` (failed: ${failed.map((r) => r.name).join(', ')})` : '') +
      `; screenshots in ${path.relative(process.cwd(), SHOTS) || SHOTS}`,
  );
  if (failed.length || results.length === 0) process.exitCode = 1;
});

// ---------------------------------------------------------------------------
// helpers

const DEBUG = !!process.env.E2E_DEBUG;

/** A full-page screenshot <test>-<step>.png; `show` (a locator) is
 * scrolled into view first. */
async function shot(page, testName, step, show) {
  const file = await screenshot(page, `${testName}-${step}`, { show });
  if (DEBUG) console.log(`[${testName}] +${((Date.now() - started) / 1000).toFixed(1)} s ${step}`);
  return file;
}

/** Asserts that fn() stays truthy for `window` ms. Used only to show that
 * something does NOT happen (a non-event has nothing to wait for). */
async function stays(what, fn, windowMs = 1500, interval = 100) {
  const end = Date.now() + windowMs;
  while (Date.now() < end) {
    assert.ok(await fn(), `${what} no longer holds`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** A fresh workspace directory, real path (symlinks resolved). */
function workspace(label) {
  return tempDir(`ws-${label}`);
}

async function nav(page, view) {
  await page.getByTestId(`nav-${view}`).click();
  await page.waitForURL(new RegExp(`#/${view}(/|$)`));
}

async function openSkill(page, name) {
  await nav(page, 'skills');
  await page.locator(`[data-testid="skill-row"][data-name="${name}"]`).click();
  await page.waitForURL(new RegExp(`#/skills/${name}$`));
  await page.locator(`h1:text-is("${name}")`).waitFor();
  await until('run-open to be enabled', () => page.getByTestId('run-open').isEnabled());
}

/** Skills → skill → Run… → raw input and workspace → Run. */
async function startRunFromUI(page, { input = INPUT, ws, shoot } = {}) {
  await openSkill(page, SKILL);
  if (shoot) await shoot('skill-detail');
  const open = page.getByTestId('run-open');
  if ((await open.getAttribute('aria-expanded')) !== 'true') await open.click();
  await page.getByTestId('run-input-raw').fill(input);
  await page.getByTestId('run-workspace').fill(ws);
  if (shoot) await shoot('run-form');
  await page.getByTestId('run-start').click();
}

async function revisionOf(api, name = SKILL) {
  const insp = await api('InspectSkill', { name });
  const rev = insp?.execution?.revision;
  assert.match(rev ?? '', /^sha256:[0-9a-f]{64}$/, `InspectSkill(${name}).execution.revision`);
  return rev;
}

async function attemptIds(api) {
  return new Set((await api('ListRuns', {})).runs.map((r) => r.attempt_id));
}

/** The visible consent dialog (for a pending proposal unless told). */
async function consentDialog(page, state = 'pending') {
  const dlg = page.locator(`[data-testid="consent-dialog"]${state ? `[data-state="${state}"]` : ''}`);
  await dlg.waitFor({ state: 'visible' });
  return dlg;
}

async function consentState(dlg) {
  return dlg.getByTestId('consent-state').getAttribute('data-state');
}

async function closeConsent(page) {
  const dlg = page.getByTestId('consent-dialog');
  while (await dlg.isVisible()) {
    await page.getByTestId('consent-close').click();
  }
  await page.locator('#modal-host').waitFor({ state: 'hidden' });
}

/** Runs view: waits for the row of a run that was not in `before` and has
 * the given status; returns its locator and attempt id. */
async function newRunRow(page, before, status) {
  await nav(page, 'runs');
  await page.getByTestId('runs-table').waitFor();
  const not = [...before].map((a) => `:not([data-attempt="${a}"])`).join('');
  const row = page.locator(`[data-testid="run-row"][data-status="${status}"]${not}`).first();
  await row.waitFor();
  return { row, attempt: await row.getAttribute('data-attempt') };
}

/** Opens a run's detail and reads its envelope card. */
async function openEnvelope(page, row) {
  await row.click();
  const detail = page.getByTestId('run-detail');
  await detail.waitFor();
  const env = detail.getByTestId('run-envelope');
  await env.waitFor();
  const codes = await env.locator('.issues code.code-tag').allInnerTexts();
  const outBlock = env.locator('pre.output');
  const output = (await outBlock.count()) ? JSON.parse(await outBlock.innerText()) : undefined;
  return { detail, env, codes, output, status: await detail.getAttribute('data-status') };
}

async function runRecord(api, attempt) {
  const r = (await api('ListRuns', {})).runs.find((x) => x.attempt_id === attempt);
  assert.ok(r, `ListRuns has attempt ${attempt}`);
  return r;
}

/** Watches the page for any consent dialog ever being attached. */
async function watchForConsent(page) {
  await page.evaluate(() => {
    window.__e2eConsentSeen = !!document.querySelector('[data-testid="consent-dialog"]');
    window.__e2eConsentObserver?.disconnect();
    const obs = new MutationObserver(() => {
      if (document.querySelector('[data-testid="consent-dialog"]')) window.__e2eConsentSeen = true;
    });
    obs.observe(document.body, { childList: true, subtree: true });
    window.__e2eConsentObserver = obs;
  });
  return () => page.evaluate(() => window.__e2eConsentSeen);
}

// ---- Security helpers ----

async function openSecurity(page) {
  await nav(page, 'security');
  await page.getByTestId('security-mode-ask').waitFor();
}

async function fillScope(row, { revision, agent, ws, timeout, output }) {
  if (revision !== undefined) await row.getByTestId('scope-revision').fill(revision);
  if (agent !== undefined) await row.getByTestId('scope-agent').selectOption(agent);
  if (ws !== undefined) await row.getByTestId('scope-workspace').fill(ws);
  if (timeout !== undefined) await row.getByTestId('scope-timeout').fill(String(timeout));
  if (output !== undefined) await row.getByTestId('scope-output').fill(String(output));
}

async function savePolicy(page) {
  await page.getByTestId('policy-save').click();
  await page.getByTestId('policy-saved').waitFor();
}

/** The receipt id a scope row shows (full id from its title). */
async function shownReceipt(row) {
  const cell = row.getByTestId('scope-receipt');
  const text = (await cell.innerText()).trim();
  assert.ok(text !== '' && !/draft/i.test(text), `scope-receipt shows a receipt, not "${text}"`);
  const code = cell.locator('code[title]').first();
  const full = await code.getAttribute('title');
  const shown = (await code.innerText()).trim();
  assert.ok(full && shown && full.startsWith(shown), `receipt "${shown}" is a prefix of "${full}"`);
  return full;
}

// ---------------------------------------------------------------------------
// scenarios

group('approve', {}, async ({ page, api, shot }) => {
  await shot('start');
  const rev = await revisionOf(api);
  const before = await attemptIds(api);
  await startRunFromUI(page, { ws: workspace('approve'), shoot: shot });
  const dlg = await consentDialog(page);
  await shot('consent');
  const inv = await dlg.getByTestId('consent-invocation').innerText();
  assert.deepEqual(JSON.parse(inv), JSON.parse(INPUT), `the dialog shows the exact invocation (got ${inv})`);
  assert.ok(inv.includes('"text": "one two three"'), `invocation text: ${inv}`);
  const revEl = dlg.getByTestId('consent-revision');
  assert.equal(await revEl.getAttribute('data-full'), rev, 'the dialog shows the revision InspectSkill reports');
  const shortRev = (await revEl.innerText()).trim();
  assert.ok(shortRev.length >= 8 && rev.includes(shortRev), `shown revision "${shortRev}" is part of ${rev}`);
  assert.match(await dlg.getByTestId('consent-countdown').innerText(), /\d/, 'a live countdown is shown');
  await dlg.getByTestId('consent-approve').click();
  const done = page.locator('[data-testid="consent-dialog"] .run-result', { hasText: 'Succeeded' });
  await done.waitFor();
  await shot('approved');
  await closeConsent(page);
  const { row, attempt } = await newRunRow(page, before, 'succeeded');
  await shot('runs');
  const env = await openEnvelope(page, row);
  await shot('run-detail');
  assert.equal(env.status, 'succeeded');
  assert.equal(env.output?.words, 3, `text-metrics counted 3 words (output ${JSON.stringify(env.output)})`);
  const rec = await runRecord(api, attempt);
  assert.equal(rec.envelope.output.words, 3);
  assert.match(rec.authorized_by, /^person/, 'authorized by the person');
});

group('deny', {}, async ({ page, api, shot }) => {
  // 1. Deny with the button.
  let before = await attemptIds(api);
  await startRunFromUI(page, { ws: workspace('deny') });
  let dlg = await consentDialog(page);
  await shot('consent');
  await dlg.getByTestId('consent-deny').click();
  await page.locator('[data-testid="consent-state"][data-state="denied"]').waitFor();
  await shot('denied');
  await closeConsent(page);
  let { row } = await newRunRow(page, before, 'refused');
  await shot('runs');
  let env = await openEnvelope(page, row);
  await shot('run-detail');
  assert.equal(env.status, 'refused');
  assert.ok(env.codes.includes('denied'), `envelope error codes ${JSON.stringify(env.codes)} include "denied"`);

  // 2. A fresh dialog: Enter does not approve; then Esc denies.
  before = await attemptIds(api);
  await startRunFromUI(page, { ws: workspace('deny-keys') });
  dlg = await consentDialog(page);
  const id = await dlg.getAttribute('data-proposal-id');
  const approve = dlg.getByTestId('consent-approve');
  await until('Approve to be armed', () => approve.isEnabled());
  const focused = await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName);
  assert.notEqual(focused, 'consent-approve', 'focus does not start on Approve');
  await page.keyboard.press('Enter');
  const serverState = async () => (await api('PendingProposals', {})).proposals.find((p) => p.id === id)?.state;
  await stays('the proposal stays pending after Enter', async () => (await consentState(dlg)) === 'pending' && (await serverState()) === 'pending');
  await shot('after-enter');
  await page.keyboard.press('Escape');
  await page.locator(`[data-testid="consent-dialog"][data-proposal-id="${id}"] [data-testid="consent-state"][data-state="denied"]`).waitFor();
  await shot('after-escape');
  assert.equal(await serverState(), undefined, 'no longer pending on the server');
  await closeConsent(page);
  ({ row } = await newRunRow(page, before, 'refused'));
  env = await openEnvelope(page, row);
  assert.ok(env.codes.includes('denied'), `Esc: envelope error codes ${JSON.stringify(env.codes)} include "denied"`);
  const runs = (await api('ListRuns', {})).runs;
  assert.equal(runs.filter((r) => r.status === 'succeeded').length, 0, 'nothing ran');
});

group('expiry', { consentWindow: '3s' }, async ({ page, api, shot }) => {
  const before = await attemptIds(api);
  await startRunFromUI(page, { ws: workspace('expiry') });
  const dlg = await consentDialog(page, null);
  await shot('consent');
  const raisedAt = Date.now();
  const st = page.locator('[data-testid="consent-dialog"] [data-testid="consent-state"][data-state="expired"]');
  try {
    await st.waitFor();
  } catch (err) {
    // Diagnose without touching consent state (ListRuns does not poll proposals).
    const { active } = await api('ListRuns', {});
    const shown = await page.getByTestId('consent-state').getAttribute('data-state').catch(() => '?');
    err.message =
      `the consent dialog did not turn expired within ${Math.round((Date.now() - raisedAt) / 1000)} s of a 3 s window ` +
      `(dialog state "${shown}"; server active runs: ${JSON.stringify(active.map((a) => a.state))}).\n` +
      err.message;
    throw err;
  }
  assert.match(await st.innerText(), /expired/i, 'consent-state says expired');
  assert.equal(await dlg.getByTestId('consent-approve').count(), 0, 'no Approve once expired (read-only)');
  assert.equal(await dlg.getByTestId('consent-deny').count(), 0, 'no Deny once expired (read-only)');
  await shot('expired');
  await closeConsent(page);
  const { row, attempt } = await newRunRow(page, before, 'refused');
  const env = await openEnvelope(page, row);
  await shot('run-detail');
  assert.ok(env.codes.includes('expired'), `envelope error codes ${JSON.stringify(env.codes)} include "expired"`);
  assert.equal((await runRecord(api, attempt)).envelope.errors[0].code, 'expired');
});

group('trusted-revisions', {}, async ({ page, api, shot }) => {
  const rev = await revisionOf(api);
  const ws = workspace('trusted');
  await openSecurity(page);
  await shot('security');
  await page.getByTestId('security-mode-trusted_revisions').check();
  await page.getByTestId('scope-add').click();
  const row = page.getByTestId('scope-row').last();
  await fillScope(row, { revision: rev, agent: 'local', ws, timeout: 5000, output: 16384 });
  await shot('scope-draft');
  await savePolicy(page);
  await shot('saved', page.getByTestId('policy-saved'));
  let policy = await api('GetPolicy', {});
  assert.equal(policy.mode, 'trusted_revisions');
  assert.equal(policy.trusted.length, 1);
  const scope = policy.trusted[0];
  assert.deepEqual(
    { revision: scope.revision, agentId: scope.agentId, workspace: scope.workspace, t: scope.timeoutMsCeiling, o: scope.maxOutputBytesCeiling },
    { revision: rev, agentId: 'local', workspace: ws, t: 5000, o: 16384 },
  );
  assert.match(scope.receiptId ?? '', /^[0-9a-f-]{36}$/, 'a receipt was issued');
  assert.equal(await page.getByTestId('scope-row').first().getAttribute('data-draft'), 'false');
  const receipt1 = await shownReceipt(page.getByTestId('scope-row').first());
  assert.equal(receipt1, scope.receiptId, 'the UI shows the stored receipt id');

  // A run in the scope's workspace runs without asking.
  let before = await attemptIds(api);
  const consentSeen = await watchForConsent(page);
  await startRunFromUI(page, { ws });
  const { row: runRowEl, attempt } = await newRunRow(page, before, 'succeeded');
  assert.equal(await consentSeen(), false, 'no consent dialog for a trusted run');
  const rec = await runRecord(api, attempt);
  assert.equal(rec.authorized_by, `trusted scope ${receipt1}`);
  await shot('runs');
  const env = await openEnvelope(page, runRowEl);
  assert.equal(env.output?.words, 3);
  await shot('run-detail');

  // Changing a ceiling re-issues the receipt.
  await openSecurity(page);
  await page.getByTestId('scope-row').first().getByTestId('scope-timeout').fill('6000');
  await savePolicy(page);
  await shot('ceiling-changed', page.getByTestId('policy-saved'));
  policy = await api('GetPolicy', {});
  const receipt2 = await shownReceipt(page.getByTestId('scope-row').first());
  assert.equal(policy.trusted[0].timeoutMsCeiling, 6000);
  assert.equal(receipt2, policy.trusted[0].receiptId);
  assert.notEqual(receipt2, receipt1, 'a changed scope gets a new receipt');

  // Removing the scope revokes it: the next run asks again.
  await page.getByTestId('scope-row').first().getByTestId('scope-remove').click();
  await savePolicy(page);
  await shot('scope-removed', page.getByTestId('policy-saved'));
  assert.equal(await page.getByTestId('scope-row').count(), 0);
  policy = await api('GetPolicy', {});
  assert.deepEqual(policy.trusted, []);
  assert.equal(policy.mode, 'trusted_revisions');
  before = await attemptIds(api);
  await startRunFromUI(page, { ws });
  const dlg = await consentDialog(page);
  await shot('consent-again');
  await dlg.getByTestId('consent-deny').click();
  await page.locator('[data-testid="consent-state"][data-state="denied"]').waitFor();
  await closeConsent(page);
  const denied = await newRunRow(page, before, 'refused');
  const denEnv = await openEnvelope(page, denied.row);
  assert.ok(denEnv.codes.includes('denied'), `codes ${JSON.stringify(denEnv.codes)}`);
});

group('malformed-settings', {}, async ({ page, api, shot }) => {
  const rev = await revisionOf(api);
  const ws = workspace('malformed');
  await openSecurity(page);
  // A valid stored policy to protect.
  await page.getByTestId('security-mode-trusted_revisions').check();
  await page.getByTestId('scope-add').click();
  await fillScope(page.getByTestId('scope-row').last(), { revision: rev, agent: 'local', ws, timeout: 5000, output: 16384 });
  await savePolicy(page);
  const stored = await api('GetPolicy', {});
  assert.equal(stored.trusted.length, 1);
  await shot('valid-saved', page.getByTestId('policy-saved'));

  // An out-of-range ceiling, together with another change (safe mode on):
  // the whole save is rejected, nothing partially applies.
  const row = page.getByTestId('scope-row').first();
  await row.getByTestId('scope-timeout').fill('1');
  // The switch's visual track covers the checkbox: click the label, as a person would.
  await page.locator('label.switch', { has: page.getByTestId('security-safe-mode') }).click();
  assert.equal(await page.getByTestId('security-safe-mode').isChecked(), true, 'safe mode toggled on in the draft');
  await page.getByTestId('policy-save').click();
  const errs = page.getByTestId('policy-errors');
  await errs.waitFor();
  await shot('rejected', errs);
  const errText = await errs.innerText();
  assert.match(errText, /Scope 1 · Time ceiling: at least 1,000 ms/, `policy-errors names the field and gives the bound: ${errText}`);
  assert.equal(await page.getByTestId('policy-saved').count(), 0);
  await until('the timeout field to be marked invalid', async () => (await page.getByTestId('scope-row').first().getByTestId('scope-timeout').getAttribute('aria-invalid')) === 'true');
  assert.deepEqual(await api('GetPolicy', {}), stored, 'the stored policy is unchanged after the rejected save');

  await page.reload();
  await page.waitForURL(/#\/security/);
  await page.getByTestId('security-mode-trusted_revisions').waitFor();
  await page.getByTestId('scope-row').first().waitFor();
  await shot('reloaded');
  assert.equal(await page.getByTestId('security-mode-trusted_revisions').isChecked(), true);
  assert.equal(await page.getByTestId('security-safe-mode').isChecked(), false, 'safe mode was not applied');
  assert.equal(await page.getByTestId('scope-row').count(), 1);
  assert.equal(await page.getByTestId('scope-row').first().getByTestId('scope-timeout').inputValue(), '5000');
  assert.equal(await shownReceipt(page.getByTestId('scope-row').first()), stored.trusted[0].receiptId);
  assert.equal(await page.getByTestId('policy-errors').count(), 0);
  assert.deepEqual(await api('GetPolicy', {}), stored, 'the stored policy is unchanged after reload');
});

group('forged-receipt', {}, async ({ srv, page, api, shot }) => {
  // Someone with write access to the SQLite file swaps the receipt of a
  // trusted scope for a hand-written one: nothing is approved, Security
  // says why, and the person can replace the bad value.
  const rev = await revisionOf(api);
  const ws = workspace('forged');
  await api('SetPolicy', { policy: { mode: 'trusted_revisions', safeMode: false, trusted: [{ revision: rev, agentId: 'local', workspace: ws, timeoutMsCeiling: 5000, maxOutputBytesCeiling: 16384 }] } });
  const db = path.join(srv.dataDir, 'gatehouse.db');
  execFileSync('sqlite3', [db, `UPDATE settings SET value = json_set(value, '$.trusted[0].receiptId', '0b9e2a4c-5f1d-4e7a-9c3b-2d8f6a1e4b7c') WHERE key = 'skill_execution_policy'`]);
  const before = await attemptIds(api);
  await startRunFromUI(page, { ws });
  const { row } = await newRunRow(page, before, 'refused');
  const env = await openEnvelope(page, row);
  assert.ok(env.codes.includes('policy_unreadable'), `a forged receipt approves nothing (codes ${JSON.stringify(env.codes)})`);
  await nav(page, 'security');
  const card = page.getByTestId('policy-invalid');
  await card.waitFor();
  await shot('invalid-policy', card);
  const text = await card.innerText();
  assert.match(text, /unverified_receipt/, `Security shows the reason: ${text}`);
  assert.match(text, /\$\.trusted\[0\]\.receiptId/, 'with the path of the problem');
  await page.getByTestId('policy-reset').click();
  await page.getByTestId('security-mode-ask').waitFor();
  assert.equal(await page.getByTestId('security-safe-mode').isChecked(), true, 'the replacement turns safe mode on');
  const policy = await api('GetPolicy', {});
  assert.deepEqual(policy, { mode: 'ask', safeMode: true, trusted: [] });
});

/** `gatehouse security get --json` against the server's own data directory
 * (the CLI a person would run next to the app). */
function cliSecurity(srv) {
  const out = execFileSync(BIN, ['security', 'get', '--json'], { env: { ...process.env, HOME: srv.home, GATEHOUSE_DATA_DIR: srv.dataDir }, encoding: 'utf8' });
  return JSON.parse(out);
}

group('confinement-setting', {}, async ({ srv, page, api, shot }) => {
  // The Security view shows the setting and what the kernel enforces, exactly
  // as GetSecurity reports it; turning confinement off warns before saving,
  // and the saved setting is what the CLI, GetSecurity and the consent dialog see.
  const before = await api('GetSecurity', {});
  assert.deepEqual(before.confinement, { filesystem: 'workspace', network: 'deny' }, 'confinement is on by default');
  await openSecurity(page);
  const now = page.getByTestId('confinement-now');
  await now.waitFor();
  assert.equal(await page.getByTestId('confinement-filesystem-workspace').isChecked(), true);
  assert.equal(await page.getByTestId('confinement-network-deny').isChecked(), true);
  const shownEnforced = async () =>
    page.locator('[data-testid="confinement-features"] li').evaluateAll((els) => els.map((e) => `${e.dataset.feature}:${e.dataset.enforced}`));
  const want = (v) => [...v.enforcement.enforced.map((f) => `${f}:true`), ...v.enforcement.not_enforced.map((f) => `${f}:false`)];
  assert.deepEqual(await shownEnforced(), want(before), 'the view lists what GetSecurity says is enforced');
  assert.match(await now.innerText(), before.confined ? /Confined/ : /Partly confined|Not confined/);
  assert.equal(await page.getByTestId('confinement-ownership').getAttribute('data-mechanism'), before.ownership);
  assert.equal(await page.getByTestId('confinement-warning').count(), 0, 'no warning while nothing weakens');
  await shot('on', page.getByTestId('confinement-now'));

  // Turn both off: a warning names what a script could then do.
  await page.getByTestId('confinement-filesystem-off').check();
  await page.getByTestId('confinement-network-allow').check();
  const warn = page.getByTestId('confinement-warning');
  await warn.waitFor();
  const warnText = await warn.innerText();
  assert.match(warnText, /every file you can/);
  assert.match(warnText, /use the network/);
  assert.deepEqual((await api('GetSecurity', {})).confinement, before.confinement, 'nothing is saved before Save');
  await shot('off-draft', warn);
  await page.getByTestId('confinement-save').click();
  await page.getByTestId('confinement-saved').waitFor();
  const off = await api('GetSecurity', {});
  assert.deepEqual(off.confinement, { filesystem: 'off', network: 'allow' });
  assert.equal(off.confined, false);
  assert.deepEqual(off.enforcement.enforced, [], 'nothing is enforced with both off');
  assert.deepEqual(cliSecurity(srv).confinement, off.confinement, 'gatehouse security get sees the setting the UI saved');
  assert.match(await now.innerText(), /Not confined/);
  assert.deepEqual(await shownEnforced(), want(off));
  await shot('off-saved', now);

  // The consent dialog now gives the full-trust warning.
  await startRunFromUI(page, { ws: workspace('confinement-off') });
  let dlg = await consentDialog(page);
  assert.match(await dlg.locator('.consent-warning').innerText(), /YOUR full permissions/);
  await dlg.getByTestId('consent-deny').click();
  await page.locator('[data-testid="consent-state"][data-state="denied"]').waitFor();
  await closeConsent(page);

  // A change made with the CLI reaches the view on reload; turning it back
  // on from the UI needs no warning and is what everyone sees.
  await openSecurity(page);
  await page.getByTestId('confinement-filesystem-workspace').check();
  await page.getByTestId('confinement-network-deny').check();
  assert.equal(await page.getByTestId('confinement-warning').count(), 0, 'turning confinement on is not warned about');
  await page.getByTestId('confinement-save').click();
  await page.getByTestId('confinement-saved').waitFor();
  const on = await api('GetSecurity', {});
  assert.deepEqual(on.confinement, before.confinement);
  assert.deepEqual(cliSecurity(srv).confinement, before.confinement);
  assert.deepEqual(await shownEnforced(), want(on));
  await startRunFromUI(page, { ws: workspace('confinement-on') });
  dlg = await consentDialog(page);
  const onWarn = await dlg.locator('.consent-warning').innerText();
  if (on.confined) assert.match(onWarn, /confined: can write only/, onWarn);
  await dlg.getByTestId('consent-deny').click();
  await page.locator('[data-testid="consent-state"][data-state="denied"]').waitFor();
  await closeConsent(page);
  await openSecurity(page);
  await page.getByTestId('confinement-now').waitFor();
  await shot('on-again', page.getByTestId('confinement-now'));
});

group('untrusted-text', {}, async ({ page, shot }) => {
  // An invocation carrying a right-to-left override, a zero-width space and
  // an isolate: the dialog shows each as a visible marker, never live.
  const sneaky = '{"text":"invoice\u202Etxt.exe\u200B \u2066done\u2069"}';
  await startRunFromUI(page, { input: sneaky, ws: workspace('untrusted-text') });
  const dlg = await consentDialog(page);
  await shot('consent');
  const inv = await dlg.getByTestId('consent-invocation').innerText();
  for (const ch of ['\u202E', '\u200B', '\u2066', '\u2069']) {
    assert.ok(!inv.includes(ch), `the dialog shows U+${ch.codePointAt(0).toString(16).toUpperCase()} live: ${JSON.stringify(inv)}`);
  }
  for (const m of ['⟨U+202E⟩', '⟨U+200B⟩', '⟨U+2066⟩', '⟨U+2069⟩']) assert.ok(inv.includes(m), `the dialog shows ${m} (got ${JSON.stringify(inv)})`);
  assert.ok(inv.includes('invoice⟨U+202E⟩txt.exe'), `the text around the marker reads in order: ${inv}`);
  assert.ok((await dlg.locator('[data-testid="consent-invocation"] .hidden-char').count()) >= 4, 'markers are marked up');
  const live = await page.evaluate(() => {
    const re = /[\u202A-\u202E\u2066-\u2069\u200B-\u200F]/;
    const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const found = [];
    // (The footer's data directory is framed by Gatehouse's own LRMs.)
    for (let n = w.nextNode(); n; n = w.nextNode()) if (re.test(n.data.replace(/^\u200E|\u200E$/g, ''))) found.push(`${n.parentElement?.tagName}.${n.parentElement?.className}: ${JSON.stringify(n.data)}`);
    return found;
  });
  assert.deepEqual(live, [], 'no bidi or zero-width character is live anywhere on the page');
  await dlg.getByTestId('consent-deny').click();
  await page.locator('[data-testid="consent-state"][data-state="denied"]').waitFor();
  await closeConsent(page);
});

group('token-isolation', {}, async ({ srv, page, api }) => {
  // Another server on 127.0.0.1 (say another user's): whatever this browser
  // sends it must not carry the UI token.
  const seen = [];
  const other = http.createServer((req, res) => {
    seen.push({ url: req.url, headers: req.headers });
    res.setHeader('Content-Type', 'text/html');
    res.end('<!doctype html><title>other</title><p>another local server</p>');
  });
  await new Promise((resolve) => other.listen(0, '127.0.0.1', resolve));
  try {
    const token = await page.evaluate(() => sessionStorage.getItem('gatehouse.token'));
    assert.match(token ?? '', /^[0-9a-f]{64}$/, 'the page keeps the token in sessionStorage');
    assert.equal(new URL(page.url()).search, '', 'the token left the address bar');
    assert.deepEqual(await page.context().cookies(), [], 'no cookie is set at all');
    assert.equal(await page.evaluate(() => document.cookie), '');
    const otherUrl = `http://127.0.0.1:${other.address().port}/`;
    const p2 = await page.context().newPage();
    await p2.goto(otherUrl);
    assert.equal(await p2.evaluate(() => sessionStorage.getItem('gatehouse.token')), null, 'the other origin cannot read the token');
    await page.evaluate((u) => fetch(u, { mode: 'no-cors' }).catch(() => {}), otherUrl + 'from-app');
    await p2.close();
    await until('the other server to be visited', async () => seen.length >= 2);
    for (const r of seen) {
      const all = JSON.stringify(r.headers);
      assert.ok(!all.includes(token), `the other server received the token in ${r.url}: ${all}`);
    }
    // The token still works where it belongs, after a reload too.
    await page.reload();
    await page.getByTestId('nav-runs').waitFor();
    assert.ok((await api('ListRuns', {})).runs, 'the UI API answers after a reload');
  } finally {
    other.closeAllConnections(); // the browser keeps its connection alive
    await new Promise((resolve) => other.close(resolve));
  }
});

group('views', {}, async ({ page, api, shot }) => {
  // One finished run for the Runs views.
  const before = await attemptIds(api);
  await startRunFromUI(page, { ws: workspace('views') });
  const dlg = await consentDialog(page);
  await dlg.getByTestId('consent-approve').click();
  await page.locator('[data-testid="consent-dialog"] .run-result', { hasText: 'Succeeded' }).waitFor();
  await closeConsent(page);
  const { attempt } = await newRunRow(page, before, 'succeeded');

  const setTheme = async (scheme) => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.locator(`html[data-theme="${scheme}"]`).waitFor({ state: 'attached' });
  };
  assert.deepEqual(page.viewportSize(), { width: 1280, height: 800 });
  for (const scheme of ['light', 'dark']) {
    await setTheme(scheme);
    await nav(page, 'skills');
    await page.locator('[data-testid="skill-row"]').first().waitFor();
    await shot(`${scheme}-skills`);
    await openSkill(page, SKILL);
    await shot(`${scheme}-skill-detail`);
    await nav(page, 'runs');
    await page.locator(`[data-testid="run-row"][data-attempt="${attempt}"]`).waitFor();
    await shot(`${scheme}-runs`);
    await page.locator(`[data-testid="run-row"][data-attempt="${attempt}"]`).click();
    await page.getByTestId('run-envelope').waitFor();
    await page.locator('[data-testid="run-detail"] .timeline').waitFor();
    await shot(`${scheme}-run-detail`);
    await openSecurity(page);
    await page.locator('[data-testid="agent-row"]').first().waitFor();
    await shot(`${scheme}-security`);
  }
  await startRunFromUI(page, { ws: workspace('views-consent') });
  const pending = await consentDialog(page);
  for (const scheme of ['light', 'dark']) {
    await setTheme(scheme);
    await until('Approve to be armed', () => pending.getByTestId('consent-approve').isEnabled());
    await shot(`${scheme}-consent`);
  }
  await pending.getByTestId('consent-deny').click();
  await page.locator('[data-testid="consent-state"][data-state="denied"]').waitFor();
  await closeConsent(page);
});

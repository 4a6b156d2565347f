// Consent dialog and Runs history journeys (issue 22 items 1 and 2), in
// Chromium against a test build of `gatehouse serve`, keyboard only
// (Tab/Enter/Escape) where the person acts:
//   - open a snapshot file from the dialog and read its bytes (the staged
//     revision's, not the folder's, with control characters as markers);
//   - the "changed since the revision you approved" badge after editing the
//     bundle, with a diff of the changed file; the run's output in place;
//   - the Runs outcome column for every outcome (approved, denied, expired,
//     cancelled, trusted, plan step, refused: safe mode, blocked, capability),
//     agent names and the filter on names.
// Screenshots at 1280×800 and 1920×1080, light and dark, in
// frontend/test-results/screenshots/consent-*.png.
//
//   cd frontend && GATEHOUSE_BIN=/abs/path/bin/gatehouse-e2e node e2e/consent.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WAIT, callApi, clearShots, screenshot, setTheme, tempDir, until, withApp } from './harness.mjs';

const TEST_TIMEOUT = 240_000;

const SCRIPT = [
  '// Echoes how many keys its input has. \u202e (a bidi override, shown as a marker)',
  "let d = '';",
  "process.stdin.on('data', (c) => (d += c));",
  "process.stdin.on('end', () => process.stdout.write(JSON.stringify({ keys: Object.keys(JSON.parse(d)).length, echo: 'ok' })));",
  '',
].join('\n');

/** A skill root holding the runnable skill "edit-me" (entrypoint
 * scripts/run.mjs, plus a binary asset). */
function writeSkill() {
  const root = tempDir('consent-root');
  const dir = path.join(root, 'edit-me');
  fs.mkdirSync(path.join(dir, 'scripts'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'SKILL.md'), '---\nname: edit-me\ndescription: Counts the keys of its input and says ok. Used to show what you approve.\n---\nBody.\n');
  fs.writeFileSync(
    path.join(dir, 'execution.json'),
    JSON.stringify({
      schemaVersion: 1,
      entrypoint: 'scripts/run.mjs',
      files: ['scripts/run.mjs', 'assets/logo.bin'],
      inputSchema: { type: 'object', properties: { text: { type: 'string' }, n: { type: 'integer' } } },
      outputSchema: { type: 'object', properties: { keys: { type: 'integer' }, echo: { type: 'string' } } },
      timeoutMs: 5000,
      maxOutputBytes: 4096,
    }),
  );
  fs.writeFileSync(path.join(dir, 'assets', 'logo.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13]));
  fs.writeFileSync(path.join(dir, 'scripts', 'run.mjs'), SCRIPT);
  return { root, dir, script: path.join(dir, 'scripts', 'run.mjs') };
}

/** Presses Tab until the focused element matches selector (keyboard only). */
async function tabTo(page, selector, max = 60) {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate((s) => !!document.activeElement && document.activeElement.matches(s), selector)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** The focused element shows a visible focus indicator (an outline or a ring). */
async function focusVisible(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return false;
    const cs = getComputedStyle(el);
    return el.matches(':focus-visible') && ((cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none');
  });
}

/** Screenshots of the current view at both sizes, both themes. */
async function shots(page, name, show) {
  for (const [w, hgt] of [
    [1280, 800],
    [1920, 1080],
  ]) {
    await page.setViewportSize({ width: w, height: hgt });
    for (const theme of ['light', 'dark']) {
      await setThemeKeepingFocus(page, theme);
      await screenshot(page, `consent-${name}-${w}x${hgt}-${theme}`, { show: show?.(), fullPage: false });
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await setThemeKeepingFocus(page, 'light');
}

/** The theme toggle sits behind the modal (inert): switch the theme the
 * way the toggle does, through the document, without moving focus. */
async function setThemeKeepingFocus(page, theme) {
  const modal = await page.evaluate(() => document.body.classList.contains('modal-open'));
  if (!modal) return setTheme(page, theme);
  await page.evaluate((t) => {
    document.documentElement.dataset.theme = t;
  }, theme);
}

async function pendingDialog(page) {
  const d = page.locator('[data-testid="consent-dialog"][data-kind="proposal"][data-state="pending"]');
  await d.waitFor();
  return d;
}

async function waitArmed(page) {
  await page.waitForFunction(() => {
    const b = document.querySelector('[data-testid="consent-approve"]');
    return b && !b.disabled;
  });
}

test('consent: open snapshot files, the changed-since badge with a diff, the output in place (keyboard only)', { timeout: TEST_TIMEOUT }, async () => {
  clearShots('consent-file');
  clearShots('consent-diff');
  clearShots('consent-output');
  const skill = writeSkill();
  await withApp({ name: 'consent-files' }, async ({ srv, page }) => {
    const api = (m, a) => callApi(srv, m, a);
    await api('SetSkillRoots', { roots: [skill.root] });
    const ws = tempDir('consent-ws');
    await api('StartRun', { skill: 'edit-me', input: JSON.stringify({ text: 'hello', n: 2 }), workspace: ws });
    const dialog = await pendingDialog(page);
    assert.equal(await page.getByTestId('consent-approval').getAttribute('data-status'), 'new');
    assert.match(await page.getByTestId('consent-approval').innerText(), /New skill/);
    assert.match(await page.getByTestId('consent-description').innerText(), /Counts the keys of its input/);
    // The entrypoint is listed first.
    const firstFile = page.getByTestId('consent-file-open').first();
    assert.equal(await firstFile.getAttribute('data-path'), 'scripts/run.mjs');

    // Keyboard only: Tab to the entrypoint, Enter opens it read-only.
    await tabTo(page, '[data-testid="consent-file-open"][data-path="scripts/run.mjs"]');
    assert.ok(await focusVisible(page), 'the focused file button shows its focus');
    await page.keyboard.press('Enter');
    const body = page.getByTestId('consent-file-body');
    await body.locator('td.lc').first().waitFor();
    const lines = await body.locator('td.lc').allInnerTexts();
    const want = SCRIPT.split('\n').slice(0, -1).map((l) => l.replace('\u202e', '⟨U+202E⟩'));
    assert.deepEqual(lines, want, 'the viewer shows the snapshot bytes, line by line, the bidi override as a marker');
    assert.deepEqual(await body.locator('td.ln').allInnerTexts(), want.map((_, i) => String(i + 1)), 'line numbers');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'consent-file-body', 'focus moves into the file');
    await shots(page, 'file', () => page.getByTestId('consent-file'));

    // The folder changes while the dialog is open: the dialog still shows
    // the frozen snapshot (what would run), not the folder.
    fs.writeFileSync(skill.script, '// replaced after the request was made\n');
    // Esc in the file closes the file (the request stays pending), focus
    // goes back to its button; Enter opens it again.
    await page.keyboard.press('Escape');
    await page.getByTestId('consent-file').waitFor({ state: 'detached' });
    assert.equal(await dialog.getAttribute('data-state'), 'pending', 'Esc in the file viewer did not deny');
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.path), 'scripts/run.mjs');
    await page.keyboard.press('Enter');
    await body.locator('td.lc').first().waitFor();
    assert.equal((await body.locator('td.lc').allInnerTexts())[0], want[0], 'still the snapshot bytes after the folder changed');
    await page.keyboard.press('Escape');
    await page.getByTestId('consent-file').waitFor({ state: 'detached' });
    fs.writeFileSync(skill.script, SCRIPT);

    // A binary file is shown as binary, never as text.
    await tabTo(page, '[data-testid="consent-file-open"][data-path="assets/logo.bin"]');
    await page.keyboard.press('Enter');
    await page.getByTestId('consent-file-binary').waitFor();
    assert.equal(await body.locator('td.lc').count(), 0);
    // With a file open, Esc closes the file even when the focus has left
    // it (here: a click on the skill's description); it never denies.
    await page.getByTestId('consent-description').click();
    assert.equal(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="consent-file"]')), false, 'the click moved the focus out of the file');
    await page.keyboard.press('Escape');
    await page.getByTestId('consent-file').waitFor({ state: 'detached' });
    assert.equal(await dialog.getAttribute('data-state'), 'pending', 'Esc with a file open closed the file and did not deny');

    // Approve with the keyboard: Tab to Approve once it is armed, Enter.
    await waitArmed(page);
    await tabTo(page, '[data-testid="consent-approve"]');
    assert.ok(await focusVisible(page), 'Approve shows its focus');
    await page.keyboard.press('Enter');
    const out = page.getByTestId('consent-output');
    await out.waitFor();
    assert.match(await out.innerText(), /"keys": 2[\s\S]*"echo": "ok"/, 'the validated output appears in the dialog');
    await shots(page, 'output', () => out);

    // "Trust this revision…" opens Security with the scope filled in as an
    // unsaved draft: the policy itself does not change.
    const rev = (await api('InspectSkill', { name: 'edit-me' })).execution.revision;
    await tabTo(page, '[data-testid="consent-trust"]');
    assert.ok(await focusVisible(page), 'the Trust button shows its focus');
    await page.keyboard.press('Enter');
    await page.getByTestId('consent-dialog').waitFor({ state: 'detached' });
    const note = page.getByTestId('trust-note');
    await note.waitFor();
    assert.match(await note.innerText(), /Nothing changes until you review it and Save, and it applies only in Trusted revisions mode/);
    const row = page.locator('[data-testid="scope-row"][data-draft="true"]');
    assert.equal(await row.count(), 1);
    assert.equal(await row.getByTestId('scope-revision').inputValue(), rev);
    assert.equal(await row.getByTestId('scope-workspace').inputValue(), ws);
    assert.equal(await row.getByTestId('scope-timeout').inputValue(), '5000');
    assert.equal(await row.getByTestId('scope-output').inputValue(), '4096');
    assert.equal(await page.evaluate(() => !!document.activeElement?.closest('[data-testid="scope-row"]')), true, 'focus is in the drafted scope');
    const pol = await api('GetPolicy', {});
    assert.deepEqual([pol.mode, pol.trusted.length], ['ask', 0], 'the policy did not change');
    await shots(page, 'trust', () => row);

    // Same revision again: "same revision you approved on <date>"; a
    // large invocation gets its summary line above the JSON.
    await api('StartRun', { skill: 'edit-me', input: JSON.stringify({ n: 1, text: 'x'.repeat(3000) }), workspace: ws });
    await pendingDialog(page);
    assert.match(await page.getByTestId('consent-invocation-summary').innerText(), /^2 top-level keys, .* in all: text \(string of 3000 characters, 2\.9 KB\) · n \(number, 1 B\)$/);
    await shots(page, 'summary', () => page.getByTestId('consent-invocation-summary'));
    assert.equal(await page.getByTestId('consent-approval').getAttribute('data-status'), 'same');
    assert.match(await page.getByTestId('consent-approval').innerText(), /Same revision you approved on /);
    await page.keyboard.press('Escape'); // Esc denies
    await until('denied', async () => (await page.locator('[data-testid="consent-dialog"][data-state="denied"]').count()) === 1);
    await page.keyboard.press('Escape');
    await page.getByTestId('consent-dialog').waitFor({ state: 'detached' });

    // Edit the bundle: the next request says what changed, with a diff.
    fs.writeFileSync(skill.script, SCRIPT.replace("echo: 'ok'", "echo: 'changed', extra: true"));
    await api('StartRun', { skill: 'edit-me', input: '{"n":1}', workspace: ws });
    await pendingDialog(page);
    const badge = page.getByTestId('consent-approval');
    assert.equal(await badge.getAttribute('data-status'), 'changed');
    assert.match(await badge.innerText(), /Changed since the revision you approved on .*: scripts\/run\.mjs$/);
    await tabTo(page, '[data-testid="consent-file-open"][data-path="scripts/run.mjs"]');
    await page.keyboard.press('Enter');
    const file = page.getByTestId('consent-file');
    await body.locator('tr.add').first().waitFor();
    assert.equal(await file.getAttribute('data-mode'), 'diff', 'a changed file opens on its changes');
    assert.match((await body.locator('tr.del td.lc').allInnerTexts()).join('\n'), /echo: 'ok'/);
    assert.match((await body.locator('tr.add td.lc').allInnerTexts()).join('\n'), /echo: 'changed', extra: true/);
    await shots(page, 'diff', () => file);
    // Keyboard: "Whole file" shows the new revision whole.
    await tabTo(page, '[data-testid="consent-file-whole"]');
    await page.keyboard.press('Enter');
    await until('whole file', async () => (await file.getAttribute('data-mode')) === 'file');
    assert.equal(await body.locator('tr.add').count(), 0);
    await page.keyboard.press('Escape'); // focus is on the toggle inside the file: closes it
    await file.waitFor({ state: 'detached' });
    await page.keyboard.press('Escape'); // denies
    await until('denied', async () => (await page.locator('[data-testid="consent-dialog"][data-state="denied"]').count()) === 1);
  });
});

/** An MCP agent connection with its token. */
async function agentClient(srv, token) {
  const client = new Client({ name: 'consent-e2e-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.origin}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

test('runs: an outcome in words for every outcome, agent names, the filter on names (keyboard only)', { timeout: TEST_TIMEOUT }, async () => {
  clearShots('consent-runs');
  await withApp({ name: 'consent-runs', server: { args: ['--test-consent-window', '4s'] } }, async ({ srv, page }) => {
    const api = (m, a) => callApi(srv, m, a);
    const ws = tempDir('runs-ws');
    const input = JSON.stringify({ text: 'one two three' });
    const count = async () => (await api('ListRuns', {})).runs.length;
    const recorded = (n) => until(`${n} runs recorded`, async () => (await count()) >= n);
    const pending = () => until('a pending proposal', async () => (await api('PendingProposals', {})).proposals[0]);
    const start = () => api('StartRun', { skill: 'text-metrics', input, workspace: ws });
    let n = 0;

    // Approved by you.
    await start();
    await api('Decide', { proposalId: (await pending()).id, approve: true });
    await recorded(++n);
    // Denied.
    await start();
    await api('Decide', { proposalId: (await pending()).id, approve: false });
    await recorded(++n);
    // Expired (the 4 s test window passes).
    await start();
    await pending();
    await recorded(++n);
    // Cancelled while waiting.
    const { runId } = await start();
    await pending();
    await api('CancelRun', { runId });
    await recorded(++n);
    // Trusted (a scope with its receipt).
    const rev = (await api('InspectSkill', { name: 'text-metrics' })).execution.revision;
    const pol = await api('SetPolicy', { policy: { mode: 'trusted_revisions', safeMode: false, trusted: [{ revision: rev, agentId: 'local', workspace: ws, timeoutMsCeiling: 10000, maxOutputBytesCeiling: 65536 }] } });
    const receipt = pol.trusted[0].receiptId;
    await start();
    await recorded(++n);
    // Refused: safe mode, blocked.
    await api('SetPolicy', { policy: { mode: 'ask', safeMode: true, trusted: [] } });
    await start();
    await recorded(++n);
    await api('SetPolicy', { policy: { mode: 'blocked', safeMode: false, trusted: [] } });
    await start();
    await recorded(++n);
    // Refused: an agent without the capability (over MCP).
    const noCap = await api('AddAgent', { name: 'reader-agent', canExecuteSkills: false });
    await api('SetPolicy', { policy: { mode: 'ask', safeMode: false, trusted: [] } });
    const reader = await agentClient(srv, noCap.token);
    await reader.callTool({ name: 'run_skill', arguments: { name: 'text-metrics', input: { text: 'one two three' }, workspace: ws } });
    await reader.close();
    await recorded(++n);
    // Plan step (workflow mode, over MCP).
    await api('SetPolicy', { policy: { mode: 'workflow', safeMode: false, trusted: [] } });
    const planner = await api('AddAgent', { name: 'plan-agent', canExecuteSkills: true });
    const client = await agentClient(srv, planner.token);
    const step = { name: 'text-metrics', input: { text: 'planned step' }, workspace: ws };
    const proposing = client.callTool({ name: 'propose_workflow', arguments: { steps: [step] } }, undefined, { timeout: WAIT * 2 });
    const plan = await until('a pending plan', async () => (await api('PendingPlans', {})).plans[0]);
    await api('DecidePlan', { planId: plan.id, approve: true });
    await proposing;
    const res = await client.callTool({ name: 'run_skill', arguments: step });
    assert.equal(res.structuredContent.status, 'succeeded');
    await client.close();
    await recorded(++n);
    await api('SetPolicy', { policy: { mode: 'ask', safeMode: false, trusted: [] } });
    // Closes any dialog card still shown from the runs above.
    for (let i = 0; i < 5 && (await page.getByTestId('consent-dialog').count()); i++) await page.keyboard.press('Escape');
    await page.getByTestId('consent-dialog').waitFor({ state: 'detached' });

    // The "decided in another window" notices of the API decisions above
    // are dismissed so the screenshots show the table.
    for (const b of await page.locator('[data-testid="notice"] button').all()) await b.click().catch(() => {});
    // Keyboard only: Tab to the Runs link, Enter.
    await tabTo(page, '[data-testid="nav-runs"]');
    await page.keyboard.press('Enter');
    const table = page.getByTestId('runs-table');
    await table.waitFor();
    await until(`${n} rows`, async () => (await page.getByTestId('run-row').count()) === n);
    const outcomes = await page.getByTestId('run-outcome').allInnerTexts();
    // Newest first.
    const want = [
      'Plan step',
      'Refused (capability missing)',
      'Refused (blocked)',
      'Refused (safe mode)',
      `Trusted (receipt ${receipt.slice(0, 10)}…)`,
      'Cancelled',
      'Expired',
      'Denied',
      'Approved by you',
    ];
    assert.deepEqual(outcomes.map((s) => s.trim()), want);
    assert.ok(!outcomes[6].includes('Approved'), 'an expired request is never shown as approved');
    const agents = await page.locator('[data-testid="run-row"] td:nth-child(3)').allInnerTexts();
    assert.equal(agents[0], 'plan-agent', 'agent names, not ids');
    assert.equal(agents[1], 'reader-agent');
    const time = await page.locator('[data-testid="run-row"] td:first-child').first().innerText();
    assert.match(time, new RegExp(String(new Date().getFullYear())), 'the time column carries the date');
    await shots(page, 'runs', () => table);

    // The filter matches names: type part of a name.
    await tabTo(page, '[data-testid="runs-filter-agent"]');
    assert.ok(await focusVisible(page), 'the filter shows its focus');
    await page.keyboard.type('plan-ag');
    await until('filtered rows', async () => (await page.getByTestId('run-row').count()) === 1);
    assert.equal((await page.getByTestId('run-outcome').innerText()).trim(), 'Plan step');
    await shots(page, 'runs-filtered', () => table);
    // Enter on a row opens its detail with the outcome and the recorded rule.
    await tabTo(page, '[data-testid="run-row"]');
    await page.keyboard.press('Enter');
    await page.getByTestId('run-detail-outcome').waitFor();
    assert.match(await page.getByTestId('run-detail-outcome').innerText(), /Plan step/);
  });
});

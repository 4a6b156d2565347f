// End-to-end journeys of the person's own settings and first steps
// (issue 22 items 3 and 4), in Debian's Chromium against a fresh
// `gatehouse serve` per group (harness.mjs):
//
//   - one Save reports every field error at once, each with its label and
//     allowed range, and focus stays in the section;
//   - "Add agent" shows the token with the MCP endpoint and the same
//     configurations `gatehouse agent add` prints, and they connect;
//   - the Skills first-run card; "Use example input"; "Required" only after
//     an attempt; recent workspaces.
//
// Every journey is done with the keyboard only (Tab, Enter, Escape, typing),
// checking that the focused element shows a visible focus ring. Screenshots
// of every changed view at 1280×800 and 1920×1080, light and dark, land in
// frontend/test-results/screenshots/settings-*.png.
//
//   cd frontend && GATEHOUSE_BIN=/abs/path/bin/gatehouse-e2e node e2e/settings.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { BIN, SHOTS, clearShots, pageApi, screenshot, tempDir, until, withApp } from './harness.mjs';

const TEST_TIMEOUT = 180_000;
const results = [];
const started = Date.now();

function group(name, body) {
  test(name, { timeout: TEST_TIMEOUT }, async () => {
    const t0 = Date.now();
    clearShots(`settings-${name}-`);
    let ok = false;
    try {
      await withApp({ name: `settings-${name}` }, async ({ srv, page }) => {
        await body({ srv, page, api: (method, args) => pageApi(page, method, args) });
      });
      ok = true;
    } finally {
      results.push({ name, ok, ms: Date.now() - t0 });
    }
  });
}

process.on('exit', () => {
  const failed = results.filter((r) => !r.ok);
  console.log('');
  for (const r of results) console.log(`  ${r.ok ? 'PASS' : 'FAIL'}  ${r.name}  (${(r.ms / 1000).toFixed(1)} s)`);
  console.log(`settings e2e summary: ${results.length - failed.length}/${results.length} passed, ${failed.length} failed, ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${path.relative(process.cwd(), SHOTS) || SHOTS}`);
  if (failed.length || results.length === 0) process.exitCode = 1;
});

// ---------------------------------------------------------------------------
// keyboard helpers

/** What has focus: its data-testid (or tag#id), and whether it shows a focus ring. */
async function focused(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return { id: 'body', ring: false };
    const cs = getComputedStyle(el);
    const ring = el.matches(':focus-visible') && ((cs.outlineStyle !== 'none' && parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none');
    return { id: el.getAttribute('data-testid') || `${el.tagName.toLowerCase()}${el.id ? '#' + el.id : ''}`, ring, path: el.getAttribute('data-path') || '' };
  });
}

/** Presses Tab (Shift+Tab with back) until the element with data-testid
 * testid has focus; asserts its focus ring is visible. */
async function tabTo(page, testid, { back = false, max = 250 } = {}) {
  for (let i = 0; i < max; i++) {
    const f = await focused(page);
    if (f.id === testid) {
      assert.ok(f.ring, `${testid} has focus but no visible focus ring`);
      return;
    }
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`Tab never reached ${testid} (last: ${(await focused(page)).id})`);
}

/** Follows a main navigation link with the keyboard. */
async function navKeys(page, view) {
  await page.getByTestId(`nav-${view}`).focus(); // the start of the tab order a person would Tab to
  await page.keyboard.press('Enter');
  await page.waitForURL(new RegExp(`#/${view}(/|$)`));
}

/**
 * Saves form `form` by keyboard (Tab to `${form}-save`, Enter) and waits
 * for its refusal: the `${form}-errors` box appears and takes the focus.
 * Returns the box and the texts of its `${form}-error` items.
 */
async function saveRefused(page, form) {
  await tabTo(page, `${form}-save`);
  await page.keyboard.press('Enter');
  const box = page.getByTestId(`${form}-errors`);
  await box.waitFor();
  await until(`focus on the ${form} answer`, async () => (await focused(page)).id === `${form}-errors`);
  return { box, items: await page.getByTestId(`${form}-error`).allInnerTexts() };
}

/** Screenshots at 1280×800 and 1920×1080, light and dark; `show` is scrolled into view. */
async function shots(page, name, show) {
  for (const size of [{ width: 1280, height: 800 }, { width: 1920, height: 1080 }]) {
    await page.setViewportSize(size);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.locator(`html[data-theme="${scheme}"]`).waitFor({ state: 'attached' });
      await screenshot(page, `settings-${name}-${size.width}-${scheme}`, { show: typeof show === 'function' ? show() : show });
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: 'light' });
}

async function revisionOf(api, name = 'text-metrics') {
  const r = await api('InspectSkill', { name });
  assert.ok(r.execution.revision, `${name} has a revision`);
  return r.execution.revision;
}

// ---------------------------------------------------------------------------
// Security: one Save, every problem

group('field-errors', async ({ page, api }) => {
  const rev = await revisionOf(api);
  const before = await api('GetPolicy', {});
  await navKeys(page, 'security');
  await page.getByTestId('scope-add').waitFor();
  await tabTo(page, 'scope-add');
  // Scope 1: four mistakes.
  await page.keyboard.press('Enter');
  assert.equal((await focused(page)).id, 'scope-revision', 'Add scope puts focus in the new row');
  await page.keyboard.type('sha256:abc');
  await tabTo(page, 'scope-workspace');
  assert.equal(await page.getByTestId('scope-revision-hint').first().innerText(), 'Skill revision: sha256: followed by 64 lowercase hex digits');
  await page.keyboard.type('relative/place');
  await tabTo(page, 'scope-timeout');
  assert.equal(await page.getByTestId('scope-workspace-hint').first().innerText(), 'Workspace: an absolute path, starting with /');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('999');
  await tabTo(page, 'scope-output');
  // Leaving the field shows the mirrored hint at once (the server still decides on Save).
  await until('the time ceiling hint', async () => (await page.getByTestId('scope-timeout-hint').first().innerText()) === 'Time ceiling: at least 1,000 ms');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('1.5');
  // Scope 2: a long workspace and one past the upper bound.
  const longWs = '/home/someone/projects/clients/a-rather-long-customer-name/monorepo/packages/service-with-a-long-name';
  await tabTo(page, 'scope-add', { back: true });
  await page.keyboard.press('Enter');
  await page.keyboard.type(rev);
  await tabTo(page, 'scope-workspace');
  await page.keyboard.type(longWs);
  await tabTo(page, 'scope-timeout');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('120001');
  const { box: errs, items } = await saveRefused(page, 'policy');
  assert.deepEqual(
    items.sort(),
    [
      'Scope 1 · Output ceiling: a whole number of bytes, 1–262,144 bytes',
      'Scope 1 · Skill revision: revision must be sha256: followed by 64 lowercase hex digits',
      'Scope 1 · Time ceiling: at least 1,000 ms',
      'Scope 1 · Workspace: workspace must be an absolute, clean path',
      'Scope 2 · Time ceiling: at most 120,000 ms',
    ],
    'every problem, labelled, with its range, in one answer',
  );
  assert.match(await errs.innerText(), /Fix these 5 problems/);
  for (const [testid, n] of [['scope-revision', 0], ['scope-workspace', 0], ['scope-timeout', 0], ['scope-output', 0], ['scope-timeout', 1]]) {
    assert.equal(await page.getByTestId(testid).nth(n).getAttribute('aria-invalid'), 'true', `${testid} ${n} is marked`);
  }
  // The long workspace is written out in full under its input.
  assert.equal(await page.getByTestId('scope-workspace-full').nth(1).innerText(), longWs);
  assert.deepEqual(await api('GetPolicy', {}), before, 'nothing was saved');
  await shots(page, 'policy-errors', errs);
  // Each listed problem takes focus to its field.
  await page.keyboard.press('Tab');
  let f = await focused(page);
  assert.equal(f.id, 'policy-error');
  const first = await page.evaluate(() => document.activeElement.dataset.path);
  await page.keyboard.press('Enter');
  f = await focused(page);
  assert.equal(f.path, first, `Enter on a problem focuses its field (${first})`);
  // Fix them all and save: focus is on the saved note.
  for (const [testid, n, value] of [['scope-revision', 0, rev], ['scope-workspace', 0, '/srv/work'], ['scope-timeout', 0, '1000'], ['scope-output', 0, '262144'], ['scope-timeout', 1, '120000']]) {
    await page.getByTestId(testid).nth(n).focus();
    await page.keyboard.press('Control+A');
    await page.keyboard.type(value);
  }
  await tabTo(page, 'policy-save');
  await page.keyboard.press('Enter');
  await page.getByTestId('policy-saved').waitFor();
  await until('focus on the saved note', async () => (await focused(page)).id === 'policy-saved');
  const after = await api('GetPolicy', {});
  assert.deepEqual(after.trusted.map((s) => [s.workspace, s.timeoutMsCeiling, s.maxOutputBytesCeiling]), [['/srv/work', 1000, 262144], [longWs, 120000, 16384]], 'the limits themselves are accepted (scope 2 took the skill’s own output limit when its revision was entered)');
});

// ---------------------------------------------------------------------------
// Security: Add agent, and how to connect it

group('agent-snippets', async ({ srv, page }) => {
  await navKeys(page, 'security');
  await page.getByTestId('agent-add-name').waitFor();
  await tabTo(page, 'agent-add-name');
  await page.keyboard.type('claude-code');
  await page.keyboard.press('Enter');
  const box = page.getByTestId('agent-token-box');
  await box.waitFor();
  const token = await page.getByTestId('agent-token').inputValue();
  assert.match(token, /^gh/, 'a token');
  const shown = {};
  for (const k of ['mcpJson', 'claudeHttp', 'stdioJson', 'claudeStdio']) shown[k] = await page.getByTestId(`agent-connect-text-${k}`).innerText();
  shown.url = await page.getByTestId('agent-connect-url').innerText();
  assert.equal(shown.url, `${srv.origin}/mcp`, 'the endpoint of this running app');
  // Exactly what the CLI prints for an agent of its own, but for this token.
  const cli = JSON.parse(execFileSync(BIN, ['agent', 'add', 'cli-twin', '--json'], { env: { ...process.env, GATEHOUSE_DATA_DIR: srv.dataDir } }).toString());
  for (const [k, v] of Object.entries(cli.connect)) assert.equal(shown[k], v.split(cli.token).join(token), `${k} is the CLI's snippet`);
  // The HTTP snippet really connects: an MCP initialize with its header.
  const cfg = JSON.parse(shown.mcpJson).mcpServers.gatehouse;
  const r = await fetch(cfg.url, {
    method: 'POST',
    headers: { ...cfg.headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } } }),
  });
  assert.equal(r.status, 200, `initialize with the snippet's header: HTTP ${r.status}`);
  assert.match(await r.text(), /"serverInfo"/);
  const bad = await fetch(cfg.url, { method: 'POST', headers: { Authorization: 'Bearer gh_wrong', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{}' });
  assert.equal(bad.status, 401, 'and another token does not');
  await shots(page, 'agent-snippets', box);
  await tabTo(page, 'agent-token-done');
  await page.keyboard.press('Enter');
  await until('the token box to close', async () => (await box.count()) === 0);
});

// ---------------------------------------------------------------------------
// Skills: the first-run card

group('first-run', async ({ page, api }) => {
  await page.getByTestId('nav-skills').focus();
  await page.keyboard.press('Enter');
  const card = page.getByTestId('first-run');
  await card.waitFor();
  assert.match(await card.innerText(), /stands between AI agents and this machine/);
  assert.match(await page.getByTestId('first-run-policy').innerText(), /Policy: Ask every time/);
  assert.match(await page.getByTestId('first-run-agents').innerText(), /none yet/);
  // The data directory is no longer in the header.
  assert.equal(await page.locator('header.topbar [data-testid="data-dir"]').count(), 0, 'not in the header');
  assert.equal(await page.locator('.nav-foot [data-testid="data-dir"]').count(), 1, 'at the foot of the navigation');
  await shots(page, 'first-run', card);
  // Connect an agent from the card, keyboard only.
  await tabTo(page, 'first-run-agent-name');
  await page.keyboard.type('my-mcp-client');
  await page.keyboard.press('Enter');
  await card.getByTestId('agent-token-box').waitFor();
  const token = await card.getByTestId('agent-token').inputValue();
  assert.match(await card.getByTestId('agent-connect-text-claudeHttp').innerText(), new RegExp(`^claude mcp add --transport http gatehouse http://127\\.0\\.0\\.1:\\d+/mcp --header 'Authorization: Bearer ${token}'$`));
  assert.match(await page.getByTestId('first-run-agents').innerText(), /my-mcp-client/, 'the card shows the new agent');
  await shots(page, 'first-run-agent', card);
  await tabTo(page, 'agent-token-done');
  await page.keyboard.press('Enter');
  await until('the card to go once an agent exists', async () => (await card.count()) === 0);
  // With no agent again it comes back, until the person hides it.
  const { agents } = await api('ListAgents', {});
  await api('RemoveAgent', { id: agents.find((a) => !a.built_in).id });
  await card.waitFor();
  await page.getByTestId('nav-skills').focus();
  await tabTo(page, 'first-run-hide');
  await page.keyboard.press('Enter');
  await until('the card to hide', async () => (await card.count()) === 0);
  await page.reload();
  await page.getByTestId('skill-row').first().waitFor();
  await page.getByTestId('run-open').waitFor();
  assert.equal(await card.count(), 0, 'hidden stays hidden');
});

// ---------------------------------------------------------------------------
// Skills: the Run form

group('run-form', async ({ page }) => {
  const example = (await import('node:fs')).readFileSync(path.join(path.dirname(BIN), '..', 'bundles', 'memory-organization', 'assets', 'example-input.json'), 'utf8');
  const ws = tempDir('run-form-ws');
  await page.getByTestId('nav-skills').focus();
  await page.keyboard.press('Enter');
  const row = page.locator('[data-testid="skill-row"][data-name="memory-organization"]');
  await row.focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(/#\/skills\/memory-organization$/);
  await page.locator('h1:text-is("memory-organization")').waitFor();
  await until('Run… to be enabled', () => page.getByTestId('run-open').isEnabled());
  await tabTo(page, 'run-open');
  await page.keyboard.press('Enter');
  const panel = page.locator('.run-panel');
  await panel.waitFor();
  // Nothing is "Required" before the person tries to run.
  assert.doesNotMatch(await panel.locator('.run-form').innerText(), /Required/, 'no Required before an attempt');
  await shots(page, 'run-form', panel);
  await tabTo(page, 'run-start');
  await page.keyboard.press('Enter');
  await until('Required after the attempt', async () => /Required/.test(await panel.locator('.run-form').innerText()));
  await shots(page, 'run-form-required', panel);
  // Use example input: the bundle's file, exactly, in the raw editor and the form.
  await tabTo(page, 'run-use-example', { back: true });
  await page.keyboard.press('Enter');
  assert.equal(await page.getByTestId('run-input-raw').inputValue(), example);
  assert.doesNotMatch(await panel.locator('.run-form').innerText(), /Required/, 'the example fills the required field');
  assert.equal(await panel.locator('[data-field="now"]').inputValue(), JSON.parse(example).now);
  await tabTo(page, 'run-workspace');
  await page.keyboard.type(ws);
  await tabTo(page, 'run-start');
  await page.keyboard.press('Enter');
  const dlg = page.locator('[data-testid="consent-dialog"][data-state="pending"]');
  await dlg.waitFor();
  assert.match(await dlg.getByTestId('consent-invocation').innerText(), /user\.editor\.theme/, 'the example is what is asked for');
  await page.keyboard.press('Escape'); // denies
  await page.locator('[data-testid="consent-state"][data-state="denied"]').waitFor();
  await tabTo(page, 'consent-close');
  await page.keyboard.press('Enter');
  await page.locator('#modal-host').waitFor({ state: 'hidden' });
  // The workspace is remembered, after a reload too.
  await page.getByTestId('run-recent-ws').first().waitFor();
  await page.reload();
  await page.locator('h1:text-is("memory-organization")').waitFor();
  await until('Run… to be enabled', () => page.getByTestId('run-open').isEnabled());
  await page.getByTestId('run-open').focus();
  await page.keyboard.press('Enter');
  const recent = page.getByTestId('run-recent-ws');
  await recent.first().waitFor();
  assert.equal(await recent.count(), 1);
  await tabTo(page, 'run-recent-ws');
  await page.keyboard.press('Enter');
  assert.equal(await page.getByTestId('run-workspace').inputValue(), ws, 'a recent workspace fills the field');
  await shots(page, 'run-form-example', panel);
});

// ---------------------------------------------------------------------------
// Security: skill roots and the capture policy list every problem too

group('roots-capture-errors', async ({ page, api }) => {
  const rootsBefore = await api('GetSkillRoots', {});
  const captureBefore = await api('GetCapturePolicy', {});
  await navKeys(page, 'security');
  await page.getByTestId('root-add').waitFor();
  await tabTo(page, 'root-add');
  await page.keyboard.press('Enter');
  await page.keyboard.type('relative/skills');
  await tabTo(page, 'root-add');
  await page.keyboard.press('Enter');
  await page.keyboard.type('/no/such/folder/anywhere');
  const { box: rootsErr, items: rootItems } = await saveRefused(page, 'roots');
  assert.equal(rootItems.length, 2, `both roots: ${rootItems}`);
  assert.match(rootItems[0], /^Skill root 1: must be an absolute, clean path$/);
  assert.match(rootItems[1], /^Skill root 2: /);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  assert.equal((await focused(page)).path, 'roots.0', 'a problem takes focus to its root');
  await shots(page, 'roots-errors', rootsErr);
  assert.deepEqual(await api('GetSkillRoots', {}), rootsBefore, 'no root was saved');

  await tabTo(page, 'capture-executableRoots');
  await page.keyboard.type('relative/bin\n/usr/bin');
  await tabTo(page, 'capture-allowedEnv');
  await page.keyboard.type('LANG\nNOT A NAME');
  const { box: capErr, items: capItems } = await saveRefused(page, 'capture');
  assert.ok(capItems.some((x) => x.startsWith('Executable roots, line 1: ')), `executable roots problem: ${capItems}`);
  assert.ok(capItems.some((x) => x.startsWith('Allowed environment names, line 2: ')), `environment name problem: ${capItems}`);
  await shots(page, 'capture-errors', capErr);
  assert.deepEqual(await api('GetCapturePolicy', {}), captureBefore, 'the capture policy is unchanged');
});

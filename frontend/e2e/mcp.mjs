// MCP integration tests with a client this project did not write: the
// official TypeScript SDK (@modelcontextprotocol/sdk), against a real
// `gatehouse serve` (test build). Includes the browser scenario: an agent's
// run_skill raises the consent dialog in the UI, the test clicks Approve in
// Chromium, and the agent receives the result.
//
// Run: cd frontend && GATEHOUSE_BIN=/abs/bin/gatehouse-e2e node e2e/mcp.mjs
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const BIN = process.env.GATEHOUSE_BIN;
assert.ok(BIN, 'set GATEHOUSE_BIN to a test build of gatehouse');
const WAIT = 30_000;
const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

function tmp(label) {
  const d = mkdtempSync(path.join(os.tmpdir(), `gh-mcp-${label}-`));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

/** Starts `gatehouse serve` on a fresh data directory; returns its origin and UI token. */
async function startServer(extraEnv = {}) {
  const env = { ...process.env, HOME: tmp('home'), GATEHOUSE_DATA_DIR: path.join(tmp('data'), 'd'), ...extraEnv };
  delete env.XDG_DATA_HOME;
  const proc = spawn(BIN, ['serve', '--addr', '127.0.0.1:0'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  cleanups.push(async () => {
    try { process.kill(-proc.pid, 'SIGTERM'); } catch {}
    await new Promise((r) => (proc.exitCode !== null ? r() : proc.once('exit', r)));
  });
  const url = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no URL; stderr:\n${stderr}`)), WAIT);
    readline.createInterface({ input: proc.stdout }).once('line', (l) => { clearTimeout(t); resolve(l.trim()); });
  });
  const u = new URL(url);
  return { url, origin: u.origin, token: u.searchParams.get('token') };
}

/** Calls the UI API the way the person's browser would (UI token, same origin). */
async function ui(srv, method, args = {}) {
  const r = await fetch(`${srv.origin}/api/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${srv.token}`, Origin: srv.origin },
    body: JSON.stringify(args),
  });
  const body = await r.json();
  if (!r.ok) throw new Error(`${method}: ${r.status} ${JSON.stringify(body)}`);
  return body;
}

async function agentClient(srv, token) {
  const client = new Client({ name: 'ts-sdk-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${srv.origin}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  cleanups.push(() => client.close().catch(() => {}));
  return client;
}

/** Waits for one pending proposal and decides it through the UI API. */
async function decideNext(srv, approve) {
  const deadline = Date.now() + WAIT;
  while (Date.now() < deadline) {
    const { proposals } = await ui(srv, 'PendingProposals');
    if (proposals.length > 0) return ui(srv, 'Decide', { proposalId: proposals[0].id, approve });
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no proposal was raised');
}

const ws = () => realpathSync(tmp('ws'));
const runArgs = (workspace) => ({ name: 'text-metrics', input: { text: 'one two three' }, workspace });

test('TS SDK client: tools, approved run with progress token, denied run, wrong token', { timeout: 120_000 }, async () => {
  const srv = await startServer();
  const { token } = await ui(srv, 'AddAgent', { name: 'ts-agent', canExecuteSkills: true });
  const client = await agentClient(srv, token);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['capture_process_scenario', 'compare_process_captures', 'list_skills', 'propose_workflow', 'read_skill', 'read_skill_resource', 'run_replay_machine', 'run_skill']);
  for (const n of names) assert.doesNotMatch(n, /policy|agent|setting|trust|scope/);

  const listed = await client.callTool({ name: 'list_skills', arguments: {} });
  assert.ok(listed.structuredContent.skills.some((s) => s.name === 'text-metrics' && s.runnable));

  const approved = client.callTool({ name: 'run_skill', arguments: runArgs(ws()) }, undefined, { onprogress: () => {}, timeout: WAIT * 2 });
  await decideNext(srv, true);
  const res = await approved;
  assert.ok(!res.isError);
  assert.equal(res.structuredContent.status, 'succeeded');
  assert.equal(res.structuredContent.output.words, 3);

  const denied = client.callTool({ name: 'run_skill', arguments: runArgs(ws()) }, undefined, { timeout: WAIT * 2 });
  await decideNext(srv, false);
  const d = await denied;
  assert.equal(d.isError, true);
  assert.equal(d.structuredContent.status, 'refused');
  assert.equal(d.structuredContent.errors[0].code, 'denied');

  await assert.rejects(agentClient(srv, 'gha_' + 'A'.repeat(43)), 'a wrong token must not connect');
  await assert.rejects(agentClient(srv, srv.token), 'the UI token must not open MCP');
});

test('browser: an agent request raises the consent dialog; clicking Approve returns the result to the agent', { timeout: 120_000 }, async () => {
  const srv = await startServer();
  const { token } = await ui(srv, 'AddAgent', { name: 'browser-agent', canExecuteSkills: true });
  const client = await agentClient(srv, token);
  const context = await chromium.launchPersistentContext(tmp('profile'), {
    executablePath: process.env.GATEHOUSE_CHROMIUM || '/usr/bin/chromium', headless: true, viewport: { width: 1280, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  cleanups.push(() => context.close());
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(srv.url);
  await page.getByTestId('nav-runs').waitFor({ timeout: WAIT });

  const call = client.callTool({ name: 'run_skill', arguments: runArgs(ws()) }, undefined, { timeout: WAIT * 2 });
  const dialog = page.getByTestId('consent-dialog');
  await dialog.waitFor({ timeout: WAIT });
  await assert.doesNotReject(dialog.getByText('browser-agent').first().waitFor({ timeout: WAIT }));
  const approve = page.getByTestId('consent-approve');
  await page.waitForFunction(() => {
    const b = document.querySelector('[data-testid="consent-approve"]');
    return b && !b.disabled;
  }, null, { timeout: WAIT });
  await page.screenshot({ path: path.join('test-results', 'screenshots', 'mcp-consent-dialog.png') });
  await approve.click();
  const res = await call;
  assert.equal(res.structuredContent.status, 'succeeded');
  assert.equal(res.structuredContent.output.words, 3);
});

/** Opens the app in Chromium and waits until it is ready. */
async function openApp(srv, label) {
  const context = await chromium.launchPersistentContext(tmp(label), {
    executablePath: process.env.GATEHOUSE_CHROMIUM || '/usr/bin/chromium', headless: true, viewport: { width: 1280, height: 800 },
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  cleanups.push(() => context.close());
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(srv.url);
  await page.getByTestId('nav-runs').waitFor({ timeout: WAIT });
  return page;
}

/** Waits until the dialog's button (armed after a short delay) can be clicked, then clicks it. */
async function clickArmed(page, testid) {
  await page.waitForFunction((id) => {
    const b = document.querySelector(`[data-testid="${id}"]`);
    return b && !b.disabled;
  }, testid, { timeout: WAIT });
  await page.getByTestId(testid).click();
}

test('browser: propose_workflow raises the plan dialog; approving lets each step run once', { timeout: 120_000 }, async () => {
  const srv = await startServer();
  await ui(srv, 'SetPolicy', { policy: { mode: 'workflow', safeMode: false, trusted: [] } });
  const { token } = await ui(srv, 'AddAgent', { name: 'plan-agent', canExecuteSkills: true });
  const client = await agentClient(srv, token);
  const page = await openApp(srv, 'profile-plan');
  const workspace = ws();
  const steps = [
    { name: 'text-metrics', input: { text: 'first step' }, workspace },
    { name: 'text-metrics', input: { text: 'the second step' }, workspace },
  ];
  const call = client.callTool({ name: 'propose_workflow', arguments: { steps } }, undefined, { timeout: WAIT * 2 });
  const dialog = page.locator('[data-testid="consent-dialog"][data-kind="plan"]');
  await dialog.waitFor({ timeout: WAIT });
  await page.getByTestId('plan-step-1').getByText('the second step').waitFor({ timeout: WAIT });
  await page.screenshot({ path: path.join('test-results', 'screenshots', 'mcp-plan-dialog.png') });
  await clickArmed(page, 'consent-approve');
  const res = await call;
  assert.equal(res.structuredContent.state, 'approved');
  const first = await client.callTool({ name: 'run_skill', arguments: steps[0] });
  assert.equal(first.structuredContent.status, 'succeeded');
  const again = await client.callTool({ name: 'run_skill', arguments: steps[0] });
  assert.equal(again.structuredContent.errors[0].code, 'off_plan');
  const second = await client.callTool({ name: 'run_skill', arguments: steps[1] });
  assert.equal(second.structuredContent.output.words, 3);
});

test('browser: a capture without auto-grant raises the grant dialog; "Allow for this session" covers the next capture', { timeout: 120_000 }, async () => {
  const work = ws();
  const srv = await startServer({
    GATEHOUSE_PROCESS_CAPTURE_ENABLED: '1', GATEHOUSE_PROCESS_CAPTURE_AUTO_GRANT: '0', GATEHOUSE_PROCESS_ALLOW_EXTERNAL_NETWORK: '1',
    GATEHOUSE_PROCESS_EXECUTABLE_ROOTS_JSON: '["/bin","/usr/bin"]', GATEHOUSE_PROCESS_WORKING_ROOTS_JSON: JSON.stringify([work]),
  });
  const { token } = await ui(srv, 'AddAgent', { name: 'capture-agent', canExecuteSkills: false });
  const client = await agentClient(srv, token);
  const page = await openApp(srv, 'profile-grant');
  const scenario = { approved: true, executable: '/bin/sh', arguments: ['-c', 'echo hello from a granted capture'], working_directory: work, timeout_ms: 5000 };
  const call = client.callTool({ name: 'capture_process_scenario', arguments: scenario }, undefined, { timeout: WAIT * 2 });
  await page.locator('[data-testid="consent-dialog"][data-kind="grant"]').waitFor({ timeout: WAIT });
  await page.getByTestId('grant-command').getByText('hello from a granted capture').waitFor({ timeout: WAIT });
  await page.screenshot({ path: path.join('test-results', 'screenshots', 'mcp-grant-dialog.png') });
  await clickArmed(page, 'grant-session');
  const res = await call;
  assert.equal(res.isError, undefined, JSON.stringify(res.structuredContent));
  assert.match(res.structuredContent.resource, /^gatehouse:\/\/evidence\//);
  const next = await client.callTool({ name: 'capture_process_scenario', arguments: scenario }, undefined, { timeout: WAIT });
  assert.ok(next.structuredContent.evidence_id, JSON.stringify(next.structuredContent));
  const { grants } = await ui(srv, 'PendingGrants');
  assert.equal(grants.length, 0);
});

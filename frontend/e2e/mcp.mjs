// MCP integration tests with a client this project did not write: the
// official TypeScript SDK (@modelcontextprotocol/sdk), against a real
// `gatehouse serve` (test build). Includes the browser scenario: an agent's
// run_skill raises the consent dialog in the UI, the test clicks Approve in
// Chromium, and the agent receives the result.
//
// Run: cd frontend && GATEHOUSE_BIN=/abs/bin/gatehouse-e2e node e2e/mcp.mjs
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { WAIT, callApi, captureEnv, openApp, screenshot, startServer, tempDir } from './harness.mjs';

const cleanups = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

/** Starts `gatehouse serve` on a fresh data directory (extraEnv applied
 * over its environment); it is stopped after the tests. */
async function server(extraEnv = {}) {
  const srv = await startServer({ label: 'mcp', env: extraEnv });
  cleanups.push(srv.stop);
  return srv;
}

/** Calls the UI API the way the person's browser would (UI token, same origin). */
const ui = callApi;

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

const ws = () => tempDir('ws');
const runArgs = (workspace) => ({ name: 'text-metrics', input: { text: 'one two three' }, workspace });

test('TS SDK client: tools, approved run with progress token, denied run, wrong token', { timeout: 120_000 }, async () => {
  const srv = await server();
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
  const srv = await server();
  const { token } = await ui(srv, 'AddAgent', { name: 'browser-agent', canExecuteSkills: true });
  const client = await agentClient(srv, token);
  const page = await browse(srv, 'profile');

  const call = client.callTool({ name: 'run_skill', arguments: runArgs(ws()) }, undefined, { timeout: WAIT * 2 });
  const dialog = page.getByTestId('consent-dialog');
  await dialog.waitFor({ timeout: WAIT });
  await assert.doesNotReject(dialog.getByText('browser-agent').first().waitFor({ timeout: WAIT }));
  const approve = page.getByTestId('consent-approve');
  await page.waitForFunction(() => {
    const b = document.querySelector('[data-testid="consent-approve"]');
    return b && !b.disabled;
  }, null, { timeout: WAIT });
  await screenshot(page, 'mcp-consent-dialog', { fullPage: false });
  await approve.click();
  const res = await call;
  assert.equal(res.structuredContent.status, 'succeeded');
  assert.equal(res.structuredContent.output.words, 3);
});

/** Opens the app in Chromium and waits until it is ready; the browser is closed after the tests. */
async function browse(srv, label) {
  const { context, page } = await openApp(srv, { label });
  cleanups.push(() => context.close());
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
  const srv = await server();
  await ui(srv, 'SetPolicy', { policy: { mode: 'workflow', safeMode: false, trusted: [] } });
  const { token } = await ui(srv, 'AddAgent', { name: 'plan-agent', canExecuteSkills: true });
  const client = await agentClient(srv, token);
  const page = await browse(srv, 'profile-plan');
  const workspace = ws();
  const steps = [
    { name: 'text-metrics', input: { text: 'first step' }, workspace },
    { name: 'text-metrics', input: { text: 'the second step' }, workspace },
  ];
  const call = client.callTool({ name: 'propose_workflow', arguments: { steps } }, undefined, { timeout: WAIT * 2 });
  const dialog = page.locator('[data-testid="consent-dialog"][data-kind="plan"]');
  await dialog.waitFor({ timeout: WAIT });
  await page.getByTestId('plan-step-1').getByText('the second step').waitFor({ timeout: WAIT });
  await screenshot(page, 'mcp-plan-dialog', { fullPage: false });
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
  const srv = await server(captureEnv(work, { GATEHOUSE_PROCESS_CAPTURE_AUTO_GRANT: '0' }));
  const { token } = await ui(srv, 'AddAgent', { name: 'capture-agent', canExecuteSkills: true });
  const client = await agentClient(srv, token);
  const page = await browse(srv, 'profile-grant');
  const scenario = { approved: true, executable: '/bin/sh', arguments: ['-c', 'echo hello from a granted capture'], working_directory: work, timeout_ms: 5000 };
  const grantDialog = page.locator('[data-testid="consent-dialog"][data-kind="grant"][data-state="pending"]');
  // Esc denies a grant as it denies a run; Enter never allows.
  const refused = client.callTool({ name: 'capture_process_scenario', arguments: scenario }, undefined, { timeout: WAIT * 2 });
  await grantDialog.waitFor({ timeout: WAIT });
  await page.keyboard.press('Enter');
  await page.keyboard.press('Escape');
  const denied = await refused;
  assert.equal(denied.isError, true);
  assert.equal(denied.structuredContent.code, 'denied', JSON.stringify(denied.structuredContent));
  // The agent hears "denied" as soon as the backend decides, which can be
  // before this window shows the read-only card; Escape dismisses that card
  // only once it is there.
  await page.locator('[data-testid="consent-dialog"][data-kind="grant"][data-state="denied"]').waitFor({ timeout: WAIT });
  await page.keyboard.press('Escape'); // dismiss the read-only card
  await page.locator('[data-testid="consent-dialog"]').waitFor({ state: 'hidden', timeout: WAIT });
  const call = client.callTool({ name: 'capture_process_scenario', arguments: scenario }, undefined, { timeout: WAIT * 2 });
  await grantDialog.waitFor({ timeout: WAIT });
  await page.getByTestId('grant-command').getByText('hello from a granted capture').waitFor({ timeout: WAIT });
  await screenshot(page, 'mcp-grant-dialog', { fullPage: false });
  await clickArmed(page, 'grant-session');
  const res = await call;
  assert.equal(res.isError, undefined, JSON.stringify(res.structuredContent));
  assert.match(res.structuredContent.resource, /^gatehouse:\/\/evidence\//);
  const next = await client.callTool({ name: 'capture_process_scenario', arguments: scenario }, undefined, { timeout: WAIT });
  assert.ok(next.structuredContent.evidence_id, JSON.stringify(next.structuredContent));
  const { grants } = await ui(srv, 'PendingGrants');
  assert.equal(grants.length, 0);
});

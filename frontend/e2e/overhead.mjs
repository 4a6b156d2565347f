import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync } from 'node:fs';
import os from 'node:os'; import path from 'node:path'; import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
// Measures run_skill over MCP against a direct CLI run of the same trusted
// skill (make bench). Run: cd frontend && GATEHOUSE_BIN=/abs/bin/gatehouse node e2e/overhead.mjs
const BIN = process.env.GATEHOUSE_BIN;
const data = path.join(mkdtempSync(path.join(os.tmpdir(), 'ovh-')), 'd');
const ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ovh-ws-')));
const env = { ...process.env, GATEHOUSE_DATA_DIR: data };
const proc = spawn(BIN, ['serve', '--addr', '127.0.0.1:0'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
const url = await new Promise((r) => readline.createInterface({ input: proc.stdout }).once('line', (l) => r(l.trim())));
const u = new URL(url); const origin = u.origin; const token = u.searchParams.get('token');
const ui = async (m, a) => (await fetch(`${origin}/api/${m}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, Origin: origin }, body: JSON.stringify(a) })).json();
const { agent, token: at } = await ui('AddAgent', { name: 'bench', canExecuteSkills: true });
const rev = (await ui('InspectSkill', { name: 'text-metrics' })).execution.revision;
const scope = (id) => ({ revision: rev, agentId: id, workspace: ws, timeoutMsCeiling: 5000, maxOutputBytesCeiling: 16384 });
await ui('SetPolicy', { policy: { mode: 'trusted_revisions', safeMode: false, trusted: [scope(agent.id), scope('local')] } });
const client = new Client({ name: 'bench', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${at}` } } }));
const N = 15; const input = { text: 'one two three' };
await client.callTool({ name: 'run_skill', arguments: { name: 'text-metrics', input, workspace: ws } });
let t0 = performance.now();
for (let i = 0; i < N; i++) { const r = await client.callTool({ name: 'run_skill', arguments: { name: 'text-metrics', input, workspace: ws } }); if (r.structuredContent.status !== 'succeeded') throw new Error(JSON.stringify(r.structuredContent)); }
const mcpMs = (performance.now() - t0) / N;
await client.close();
// CLI against the same data directory (the server's supervisor is in another process).
t0 = performance.now();
for (let i = 0; i < N; i++) { const r = spawnSync(BIN, ['skill', 'run', 'text-metrics', '--input', '-', '--workspace', ws, '--json'], { env, input: JSON.stringify(input) }); if (r.status !== 0) throw new Error(r.stderr.toString()); }
const cliMs = (performance.now() - t0) / N;
console.log(`run_skill over MCP (warm server): ${mcpMs.toFixed(1)} ms/run; CLI skill run (new process each): ${cliMs.toFixed(1)} ms/run; ratio MCP/CLI ${(mcpMs / cliMs).toFixed(2)}`);
proc.kill('SIGTERM');

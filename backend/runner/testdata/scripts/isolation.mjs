// Attempt 1 leaves traces everywhere it can; attempt 2 reports what it sees.
import { writeFileSync, existsSync, readdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const input = JSON.parse(await new Promise((resolve) => {
  let d = ''; process.stdin.on('data', (c) => { d += c; }); process.stdin.on('end', () => resolve(d));
}));
const here = path.dirname(fileURLToPath(import.meta.url));
const seen = {
  global: typeof globalThis.__gatehouseLeak,
  homeFile: existsSync(path.join(process.env.HOME, 'x')),
  tmpFiles: readdirSync(process.env.TMPDIR).length,
  home: process.env.HOME,
  tmp: process.env.TMPDIR,
};
if (input.mode === 'leave') {
  globalThis.__gatehouseLeak = 1;
  writeFileSync(path.join(process.env.HOME, 'x'), 'x');
  writeFileSync(path.join(process.env.TMPDIR, 'y'), 'y');
  try { writeFileSync(path.join(here, 'injected.mjs'), 'x'); seen.stagingWrite = 'succeeded'; } catch (e) { seen.stagingWrite = e.code; }
  try { writeFileSync(fileURLToPath(import.meta.url), 'x'); seen.entryWrite = 'succeeded'; } catch (e) { seen.entryWrite = e.code; }
  spawn(process.execPath, ['-e', 'setInterval(()=>{},1000)', input.marker], { stdio: 'ignore', detached: true }).unref();
}
process.stdout.write(JSON.stringify({ echo: seen }));

// Misbehaves on request: the invocation's "mode" picks a protocol violation.
import { writeSync } from 'node:fs';
const input = JSON.parse(await new Promise((resolve) => {
  let d = ''; process.stdin.on('data', (c) => { d += c; }); process.stdin.on('end', () => resolve(d));
}));
const out = (s) => writeSync(1, s);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
switch (input.mode) {
  case 'none': break;
  case 'two': out('{"echo":1}\n{"echo":2}\n'); break;
  case 'pad': out(JSON.stringify({ echo: 'x'.repeat(input.n) })); break; // exactly n + 11 bytes
  case 'nan': out('{"echo":NaN}'); break;
  case 'split-valid': out('{"echo":"'); writeSync(1, Buffer.from([0xc3])); await sleep(50); writeSync(1, Buffer.from([0xa9])); out('"}'); break;
  case 'split-invalid': out('{"echo":"'); writeSync(1, Buffer.from([0xc3])); await sleep(50); writeSync(1, Buffer.from([0x28])); out('"}'); break;
  case 'stderr': writeSync(2, 'e'.repeat(input.n)); out('{"echo":"ok"}'); break;
  case 'exit3': out('{"echo":1}'); process.exit(3);
  case 'schema': out('{"echo":1,"unexpected":true}'); break;
  case 'progress':
    for (let i = 1; i <= 3; i++) writeSync(3, JSON.stringify({ type: 'progress', completed: i, total: 3, message: `step ${i}` }) + '\n');
    writeSync(3, 'not json\n');
    writeSync(3, JSON.stringify({ type: 'progress', completed: 5, total: 4 }) + '\n');
    out('{"echo":"done"}'); break;
  case 'env': out(JSON.stringify({ echo: { env: process.env, cwd: process.cwd(), argv: process.argv.slice(1), execArgv: process.execArgv } })); break;
  case 'hang': setInterval(() => {}, 1000); break;
}

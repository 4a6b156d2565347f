// Times @xterm/headless writing a byte stream, for the rendering
// throughput benchmark (backend/capture/render_bench_test.go).
//
//   node frontend/conformance/bench.mjs FILE COLUMNS ROWS CHUNK RUNS [frames]
//
// Each run writes FILE to a fresh Terminal of COLUMNS x ROWS (scrollback
// 1000) in CHUNK-byte writes, as a PTY delivers them, and waits until
// xterm.js has parsed everything. With "frames", it reads a frame after
// every chunk as the capture's renderer does (the visible rows, the
// cursor and the serialized state, frontend/renderer/screen.mjs). One warm-up run is not counted. Prints
// {"bytes", "runs", "median_ns", "min_ns", "mb_per_s"} (MB/s of the median).
import { readFileSync } from 'node:fs';
import pkg from '@xterm/headless';
import { frame } from '../renderer/screen.mjs';

const { Terminal } = pkg;
const [file, cols, rows, chunk, runs, mode] = process.argv.slice(2);
if (!file || !(+cols > 0) || !(+rows > 0) || !(+chunk > 0) || !(+runs > 0)) {
  process.stderr.write('usage: bench.mjs FILE COLUMNS ROWS CHUNK RUNS\n');
  process.exit(2);
}
const data = new Uint8Array(readFileSync(file));

async function once() {
  const term = new Terminal({ cols: +cols, rows: +rows, scrollback: 1000, allowProposedApi: true });
  const start = process.hrtime.bigint();
  for (let i = 0; i < data.length; i += +chunk) {
    if (mode === 'frames') {
      await new Promise((resolve) => term.write(data.subarray(i, Math.min(i + +chunk, data.length)), resolve));
      JSON.stringify(frame(term));
    } else {
      term.write(data.subarray(i, Math.min(i + +chunk, data.length)));
    }
  }
  await new Promise((resolve) => term.write('', resolve));
  const ns = Number(process.hrtime.bigint() - start);
  term.dispose();
  return ns;
}

await once();
const times = [];
for (let i = 0; i < +runs; i++) times.push(await once());
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
process.stdout.write(JSON.stringify({
  bytes: data.length,
  runs: +runs,
  median_ns: median,
  min_ns: times[0],
  mb_per_s: data.length / 1e6 / (median / 1e9),
}) + '\n');

// Times @xterm/headless alone on a byte stream: the baseline of the
// rendering throughput benchmark (backend/capture/render_bench_test.go).
//
//   node frontend/conformance/bench.mjs FILE COLUMNS ROWS CHUNK RUNS [write|frames] [cold]
//
// Each run writes FILE to a fresh Terminal of COLUMNS x ROWS (scrollback
// 1000) in CHUNK-byte writes, as a PTY delivers them, and waits until
// xterm.js has parsed everything. With "frames", it reads a frame after
// every chunk as the capture's renderer does (the visible rows, the
// cursor and the serialized state, frontend/renderer/screen.mjs) and
// nothing more: in one process a frame needs no encoding (the helper's
// binary frames and their reading in Go are part of the path measured
// against this). Each chunk is then parsed at once by xterm.js's own
// write buffer (writeSync, as the renderer helper does) rather than
// through Terminal.write's callback, which waits for a timer (at least
// 1 ms in Node) per chunk and so would time Node's timers, not xterm.js.
//
// Warm (the default): one warm-up run is not counted, then RUNS runs.
// Cold ("cold"): exactly one run, no warm-up, as a capture's renderer
// helper does its one run in a fresh Node; the caller times the whole
// process (Node's start, loading xterm.js, the run, the exit). It prints
// {"bytes", "runs", "median_ns", "min_ns", "mb_per_s", "sink"}: MB/s of
// the median, and a sum over the frames read (so none is optimized away).
import { readFileSync } from 'node:fs';
import pkg from '@xterm/headless';
import { frame } from '../renderer/screen.mjs';

const { Terminal } = pkg;
const [file, cols, rows, chunk, runs, mode = 'write', temp = 'warm'] = process.argv.slice(2);
if (!file || !(+cols > 0) || !(+rows > 0) || !(+chunk > 0) || !(+runs > 0) || !['write', 'frames'].includes(mode) || !['warm', 'cold'].includes(temp)) {
  process.stderr.write('usage: bench.mjs FILE COLUMNS ROWS CHUNK RUNS [write|frames] [cold]\n');
  process.exit(2);
}
const data = new Uint8Array(readFileSync(file));

// sink keeps every frame's text used, so no frame is optimized away.
let sink = 0;
function read(term) {
  const f = frame(term);
  sink += f.s.length + f.l.length + f.x;
}

async function once() {
  const term = new Terminal({ cols: +cols, rows: +rows, scrollback: 1000, allowProposedApi: true });
  const start = process.hrtime.bigint();
  for (let i = 0; i < data.length; i += +chunk) {
    const c = data.subarray(i, Math.min(i + +chunk, data.length));
    if (mode === 'frames') {
      term._core._writeBuffer.writeSync(c);
      read(term);
    } else {
      term.write(c);
    }
  }
  await new Promise((resolve) => term.write('', resolve));
  read(term);
  const ns = Number(process.hrtime.bigint() - start);
  term.dispose();
  return ns;
}

if (temp === 'cold') {
  const ns = await once();
  process.stdout.write(JSON.stringify({ bytes: data.length, runs: 1, median_ns: ns, min_ns: ns, mb_per_s: data.length / 1e6 / (ns / 1e9), sink }) + '\n');
  process.exit(0);
}
await once();
const times = [];
for (let i = 0; i < +runs; i++) times.push(await once());
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
process.stdout.write(
  JSON.stringify({
    bytes: data.length,
    runs: +runs,
    median_ns: median,
    min_ns: times[0],
    mb_per_s: data.length / 1e6 / (median / 1e9),
    sink,
  }) + '\n',
);

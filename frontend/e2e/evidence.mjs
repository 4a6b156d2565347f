// End-to-end tests of the Evidence library and replay.
//
// Makes real captures with `gatehouse capture-process` (a real PTY), then
// drives the real built UI in Debian's Chromium through playwright-core
// against `gatehouse serve` on a fresh data directory: import by file
// picker and by drag and drop, tampered files rejected with their failing
// paths, replay and seek (the screen at a seek point equals the capture's
// rendered frame for that time, read from xterm's buffer), keyboard
// shortcuts, delete, and the timing of opening a 10 MB capture and of
// seeking at its end.
//
//   cd frontend && GATEHOUSE_BIN=/abs/path/bin/gatehouse-e2e node e2e/evidence.mjs
//
// Screenshots land in frontend/test-results/screenshots/evidence-*.png.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { BIN, WAIT, callApi, captureEnv, screenshot, setTheme, tempDir, until, withApp } from './harness.mjs';

const TEST_TIMEOUT = 300_000;
const SECRET = 'hunter2-NOT-IN-THE-UI';

// ---------------------------------------------------------------------------
// real captures

const run = promisify(execFile);

/** A working root (and filesystem root inside it) for captures, with the
 * operator-policy overrides that allow /bin/sh there. */
function captureSetup() {
  const work = tempDir('work');
  fs.mkdirSync(path.join(work, 'state'));
  const env = {
    ...process.env,
    HOME: tempDir('cap-home'),
    GATEHOUSE_DATA_DIR: path.join(tempDir('cap-data'), 'data'),
    ...captureEnv(work, { GATEHOUSE_PROCESS_ALLOWED_ENV_JSON: '["PATH","TOKEN"]' }),
  };
  return { work, env };
}

/** Runs `gatehouse capture-process` on a scenario; returns the Evidence
 * file it wrote and the parsed envelope. */
async function captureProcess(setup, name, scenario) {
  const dir = tempDir(`cap-${name}`);
  const sc = path.join(dir, 'scenario.json');
  fs.writeFileSync(sc, JSON.stringify({ approved: true, executable: '/bin/sh', working_directory: setup.work, environment: { PATH: '/usr/bin:/bin' }, ...scenario }));
  const { stdout } = await run(BIN, ['capture-process', sc], { env: setup.env, maxBuffer: 64 << 20 });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, stdout);
  return { file, env: JSON.parse(stdout) };
}

// RFC 8785 for the test's own re-sealing of a tampered file: sorted keys
// (UTF-16 order) and JSON.stringify's numbers and strings.
function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jcs).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${jcs(v[k])}`)
    .join(',')}}`;
}
function reseal(env) {
  const p = { ...env };
  delete p.evidence_id;
  if (env.subject) p.subject = { digest: env.subject.digest, format: env.subject.format, architecture: env.subject.architecture };
  return { ...env, evidence_id: 'ev_' + crypto.createHash('sha256').update(jcs(p)).digest('hex') };
}

/** The rendered frame a seek to t must show: the last one at or before t. */
function frameAt(rec, t) {
  let f = null;
  for (const r of rec.rendered_frames) if (r.at_ms <= t) f = r;
  if (f) return f;
  // Before the first frame: the blank terminal of the scenario's size.
  const { columns = 80, rows = 24 } = rec.manifest.scenario.terminal ?? {};
  return { sequence: 'none', at_ms: 0, columns, rows, cursor_x: 0, cursor_y: 0, lines: Array(rows).fill(' '.repeat(columns)) };
}

// ---------------------------------------------------------------------------
// helpers

async function shot(page, step) {
  await screenshot(page, `evidence-${step}`);
}

/** The player's screen (xterm's buffer) and state. */
function screen(page) {
  return page.evaluate(() => {
    const p = document.querySelector('[data-testid="player"]').gatehousePlayer;
    return { lines: p.screenLines(), info: p.screenInfo(), time: p.time, duration: p.duration };
  });
}

/** Seeks through the player API and waits for the parsed screen. */
async function seekTo(page, ms) {
  await page.evaluate(async (ms) => {
    const p = document.querySelector('[data-testid="player"]').gatehousePlayer;
    await p.seek(ms);
    await p.settled();
  }, ms);
  return screen(page);
}

function assertScreen(got, frame, what) {
  assert.ok(frame, `${what}: a rendered frame exists`);
  // Rows compare without trailing blanks: a redacted row in the record
  // can be shorter than the column count (the placeholder replaces the
  // secret's text, padding included), while a terminal row always spans
  // every column.
  const trim = (ls) => ls.map((l) => l.replace(/ +$/, ''));
  assert.deepEqual(trim(got.lines), trim(frame.lines), `${what}: screen rows equal rendered frame ${frame.sequence} (at ${frame.at_ms} ms)`);
  assert.equal(got.info.columns, frame.columns, `${what}: columns`);
  assert.equal(got.info.rows, frame.rows, `${what}: rows`);
  assert.deepEqual([got.info.cursor_x, got.info.cursor_y], [frame.cursor_x, frame.cursor_y], `${what}: cursor`);
}

/** Presses a key on the page and resolves with the seek the UI reports. */
function pressAndSeek(page, key) {
  return page.evaluate((key) => {
    const el = document.querySelector('[data-testid="evidence-detail"]');
    return new Promise((resolve) => {
      el.addEventListener('gatehouse:seeked', (e) => resolve(e.detail), { once: true });
      document.body.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    });
  }, key);
}

async function dropFile(page, name, text) {
  await page.evaluate(
    ({ name, text }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: 'application/json' }));
      const target = document.querySelector('[data-testid="evidence-library"]');
      for (const type of ['dragenter', 'dragover', 'drop']) target.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    { name, text },
  );
}

/** Runs body(page, srv) with the app of a fresh server open on the
 * Evidence view (harness withApp: diagnostics and cleanup); afterwards no
 * console error other than a logged 4xx status may have appeared. */
async function withUI(label, body, browser = {}) {
  await withApp({ name: `evidence-${label}`, browser }, async ({ srv, page, consoleErrors }) => {
    await page.getByTestId('nav-evidence').click();
    await page.waitForURL(/#\/evidence$/);
    await body(page, srv);
    // Failed API calls (the rejected imports) log their HTTP status; any
    // other console error (a CSP violation, say) fails the test.
    assert.deepEqual(consoleErrors.filter((e) => !/status of 4\d\d/.test(e)), [], 'no console errors (CSP violations included)');
  });
}

// ---------------------------------------------------------------------------
// tests

test('evidence library: import, reject tampering, replay, seek, panels, delete', { timeout: TEST_TIMEOUT }, async () => {
  const setup = captureSetup();
  const A = await captureProcess(setup, 'counter', {
    arguments: [
      '-c',
      "printf 'start \\033[1;32mgreen\\033[0m\\n'; for i in 1 2 3 4 5; do printf 'line %s\\n' $i; sleep 0.1; done; " +
        "read x; echo \"got ${#x} chars\"; echo data > state/f; codex --version; sleep 0.2; printf '\\033[2J\\033[Hcleared\\n'; sleep 2.5; echo done",
    ],
    environment: { PATH: '/usr/bin:/bin', TOKEN: SECRET },
    secret_aliases: ['TOKEN'],
    filesystem_roots: [path.join(setup.work, 'state')],
    events: [
      { type: 'input', at_ms: 900, data: SECRET + '\r', sensitive: true },
      { type: 'resize', at_ms: 1300, columns: 60, rows: 20 },
    ],
    checkpoints: [{ name: 'third_line', trigger: { type: 'terminal_literal', value: 'line 3' } }],
    command_shims: [
      { name: 'codex', routes: [{ arguments: ['--version'], outputs: [{ at_ms: 0, stream: 'stdout', data: 'codex 1.2.3\n' }], termination: { type: 'exit', code: 0 }, max_calls: 1 }] },
    ],
  });
  const B = await captureProcess(setup, 'other', { arguments: ['-c', "echo other capture; sleep 0.2; echo end"] });
  const recA = A.env.normalized_result;
  assert.ok(recA.rendered_frames.length >= 8, 'capture A has rendered frames');
  assert.ok(!fs.readFileSync(A.file, 'utf8').includes(SECRET), 'the secret is not in the capture file');

  await withUI('library', async (page, srv) => {
    await page.getByTestId('evidence-empty').waitFor();
    await setTheme(page, 'light');
    await shot(page, 'library-empty-light');

    // Import both by the file picker.
    await page.getByTestId('evidence-file-input').setInputFiles([A.file, B.file]);
    await until('two imports', async () => (await page.locator('[data-testid="evidence-import-outcome"][data-state="imported"]').count()) === 2);
    await until('two rows', async () => (await page.getByTestId('evidence-row').count()) === 2);

    // Tampered files, dropped: a changed byte fails the envelope id; a
    // changed record re-sealed with a valid id fails its own commitment.
    const text = fs.readFileSync(A.file, 'utf8');
    const changed = text.replace('line 3', 'line 9');
    assert.notEqual(changed, text);
    await dropFile(page, 'changed-byte.json', changed);
    const rejected1 = page.locator('[data-testid="evidence-import-outcome"][data-name="changed-byte.json"][data-state="rejected"]');
    await rejected1.waitFor();
    assert.match(await rejected1.locator('[data-testid="evidence-import-issues"]').innerText(), /\$\.evidence_id\s+evidence_id_mismatch/);
    const env2 = JSON.parse(text);
    env2.normalized_result.manifest.scenario.timeout_ms += 1;
    await dropFile(page, 'resealed.json', JSON.stringify(reseal(env2)));
    const rejected2 = page.locator('[data-testid="evidence-import-outcome"][data-name="resealed.json"][data-state="rejected"]');
    await rejected2.waitFor();
    const issues2 = await rejected2.locator('[data-testid="evidence-import-issues"]').innerText();
    assert.match(issues2, /\$\.normalized_result\.manifest\.full_scenario_sha256\s+commitment_mismatch/);
    assert.doesNotMatch(issues2, /\$\.evidence_id/, 'the re-sealed id itself holds');
    await shot(page, 'library-rejected-light');
    assert.equal(await page.getByTestId('evidence-row').count(), 2, 'rejected files are not listed');
    assert.equal(fs.readdirSync(path.join(srv.dataDir, 'evidence')).filter((f) => f.endsWith('.json')).length, 2, 'rejected files were not saved');

    // Search and sort.
    await page.getByTestId('evidence-search').fill('other capture');
    await until('one match', async () => (await page.getByTestId('evidence-row').count()) === 1);
    assert.equal(await page.getByTestId('evidence-row').getAttribute('data-id'), B.env.evidence_id);
    await page.getByTestId('evidence-search').fill('');
    await page.getByTestId('evidence-imports-dismiss').click();

    // Share B with agents, and stop again: the backend's index says so.
    const shareB = page.locator(`[data-testid="evidence-share"][data-id="${B.env.evidence_id}"]`);
    assert.equal(await shareB.getAttribute('aria-pressed'), 'false');
    await shareB.click();
    await until('B shared', async () => (await shareB.getAttribute('aria-pressed')) === 'true');
    const sharedOf = async (id) => (await callApi(srv, 'ListEvidence')).evidence.find((e) => e.evidence_id === id).shared;
    assert.equal(await sharedOf(B.env.evidence_id), true, 'the library saved the choice');
    assert.equal(await sharedOf(A.env.evidence_id), false, 'only B is shared');
    assert.match(await page.locator(`[data-testid="evidence-row"][data-id="${B.env.evidence_id}"]`).innerText(), /shared with agents/);
    await shot(page, 'library-shared-light');
    await page.getByTestId('evidence-search').fill('shared');
    await until('only the shared one matches', async () => (await page.getByTestId('evidence-row').count()) === 1);
    await page.getByTestId('evidence-search').fill('');
    await shareB.click();
    await until('B unshared', async () => (await shareB.getAttribute('aria-pressed')) === 'false');
    assert.equal(await sharedOf(B.env.evidence_id), false, 'unsharing is saved too');
    await page.getByTestId('evidence-sort').selectOption('size');
    await until('sorted by size', async () => (await page.getByTestId('evidence-row').first().getAttribute('data-id')) === A.env.evidence_id);
    await setTheme(page, 'dark');
    await shot(page, 'library-dark');
    await setTheme(page, 'light');
    await shot(page, 'library-light');

    // Open A: verified by the backend and, independently, in the browser.
    await page.locator(`[data-testid="evidence-row"][data-id="${A.env.evidence_id}"]`).click();
    const detail = page.getByTestId('evidence-detail');
    await until('player ready', () => detail.getAttribute('data-ready'));
    await until('browser verification', () => detail.getAttribute('data-browser-verified'));
    assert.equal(await detail.getAttribute('data-browser-verified'), 'ok');

    // Seek: the screen at each point equals the capture's rendered frame
    // for that time, restored from keyframes.
    const points = new Set([0]);
    for (const f of recA.rendered_frames) points.add(f.at_ms).add(f.at_ms + 7);
    const dur = (await screen(page)).duration;
    points.add(dur);
    for (const t of [...points].sort(() => Math.random() - 0.5)) {
      const got = await seekTo(page, t);
      assertScreen(got, frameAt(recA, Math.min(t, dur)), `seek to ${t} ms`);
    }

    // Clicking an interaction row seeks there; the input shows only its
    // redaction placeholder.
    await page.getByTestId('ev-tab-events').click();
    const inputRow = page.getByTestId('ev-event-row').first();
    assert.match(await inputRow.innerText(), /<redacted-input:\d+-bytes>/);
    await inputRow.click();
    const atInput = Number(await inputRow.getAttribute('data-at'));
    await until('seek to the input', async () => Number(await detail.getAttribute('data-time')) === atInput);
    await page.evaluate(() => document.querySelector('[data-testid="player"]').gatehousePlayer.settled());
    assertScreen(await screen(page), frameAt(recA, atInput), 'row click');
    assert.ok(!(await page.locator('body').innerText()).includes(SECRET), 'the secret never reaches the UI');

    // Keyboard: End, Home, ] (next marker), [ (previous marker).
    await page.locator('body').click({ position: { x: 5, y: 5 } }).catch(() => {});
    const end = await pressAndSeek(page, 'End');
    assert.equal(end.ms, dur);
    assertScreen(await screen(page), frameAt(recA, dur), 'End');
    assert.equal((await pressAndSeek(page, 'Home')).ms, 0);
    const markers = await page.locator('[data-testid="player-marker"]').evaluateAll((els) => els.map((e) => Number(e.dataset.at)));
    const firstAfter0 = markers.filter((m) => m > 0.5).sort((a, b) => a - b)[0];
    assert.equal((await pressAndSeek(page, ']')).ms, firstAfter0, '] jumps to the next marker');
    assert.equal((await pressAndSeek(page, '[')).ms, Math.max(...markers.filter((m) => m < firstAfter0 - 0.5)), '[ jumps back');
    // Real key presses: space plays and pauses.
    await page.getByTestId('player-timeline').focus();
    await page.keyboard.press('Space');
    await until('playing by space', async () => (await detail.getAttribute('data-state')) === 'playing');
    await page.keyboard.press('Space');
    await until('paused by space', async () => (await detail.getAttribute('data-state')) === 'paused');
    // Clicking the middle of the timeline seeks to the middle.
    const box = await page.getByTestId('player-timeline').boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + 4);
    await until('seek to the middle', async () => Math.abs(Number(await detail.getAttribute('data-time')) - dur / 2) <= dur / box.width + 1);
    await page.evaluate(() => document.querySelector('[data-testid="player"]').gatehousePlayer.settled());
    const middle = await screen(page);
    assertScreen(middle, frameAt(recA, middle.time), 'timeline click');
    const kinds = new Set(await page.locator('[data-testid="player-marker"]').evaluateAll((els) => els.map((e) => e.dataset.kind)));
    for (const k of ['input', 'resize', 'checkpoint', 'shim', 'exit', 'settlement']) assert.ok(kinds.has(k), `a ${k} marker`);
    // The shim panel lists the call; clicking it seeks to it.
    await page.getByTestId('ev-tab-shims').click();
    const shimRow = page.getByTestId('ev-shim-row').first();
    assert.match(await shimRow.innerText(), /codex[\s\S]*--version[\s\S]*matched/);
    await shimRow.click();
    const atShim = Number(await shimRow.getAttribute('data-at'));
    await until('seek to the shim call', async () => Number(await detail.getAttribute('data-time')) === atShim);
    await page.evaluate(() => document.querySelector('[data-testid="player"]').gatehousePlayer.settled());
    assertScreen(await screen(page), frameAt(recA, atShim), 'shim row click');

    // Playing across the resize (raw frames and the resize applied live,
    // not restored) shows the rendered frame of the time reached.
    const resizeAt = recA.interaction_events.find((e) => e.type === 'resize').dispatched_at_ms;
    await seekTo(page, resizeAt - 120);
    await page.getByTestId('player-speed').selectOption('1');
    await page.getByTestId('player-play').click();
    await until('past the resize', async () => Number(await detail.getAttribute('data-time')) > resizeAt + 150, 10_000, 10);
    await page.getByTestId('player-play').click();
    await page.evaluate(() => document.querySelector('[data-testid="player"]').gatehousePlayer.settled());
    const live = await screen(page);
    assertScreen(live, frameAt(recA, live.time), `playback through the resize (to ${live.time.toFixed(0)} ms)`);

    // Real-time playback at 8× with the idle cap ends on the final frame.
    await page.getByTestId('player-speed').selectOption('8');
    await pressAndSeek(page, 'Home');
    await page.getByTestId('player-play').click();
    await until('playing', async () => (await detail.getAttribute('data-state')) === 'playing');
    await until('ended', async () => (await detail.getAttribute('data-state')) === 'ended', 15_000);
    await page.evaluate(() => document.querySelector('[data-testid="player"]').gatehousePlayer.settled());
    const final = recA.rendered_frames[recA.rendered_frames.length - 1];
    assertScreen(await screen(page), final, 'after playback');

    // Panels and screenshots of the replay, light and dark.
    await page.getByTestId('ev-tab-filesystem').click();
    assert.match(await page.getByTestId('ev-panel').innerText(), /created[\s\S]*<filesystem-root-0>\/f/);
    await page.getByTestId('ev-tab-commitments').click();
    assert.equal(await page.locator('[data-testid="ev-commitment"][data-ok="true"]').count(), 6);
    await page.getByTestId('ev-tab-processes').click();
    assert.ok((await page.getByTestId('ev-proc-row').count()) >= 1, 'process tree rows');
    await page.getByTestId('ev-tab-events').click();
    await seekTo(page, recA.rendered_frames.find((f) => f.lines.some((l) => l.startsWith('line 3'))).at_ms);
    await page.evaluate(() => document.querySelector('[data-testid="player"]').gatehousePlayer.highlightRows([3]));
    await page.setViewportSize({ width: 1280, height: 1180 }); // the whole view, panels included
    await shot(page, 'replay-light');
    await setTheme(page, 'dark');
    await shot(page, 'replay-dark');
    await page.getByTestId('ev-tab-commitments').click();
    await page.locator('[data-testid="ev-commitment"]').first().waitFor();
    await shot(page, 'replay-commitments-dark');
    await page.getByTestId('ev-tab-processes').click();
    await setTheme(page, 'light');
    await shot(page, 'replay-processes-light');
    await page.setViewportSize({ width: 1280, height: 800 });

    // A saved file changed on disk is re-verified on open and rejected.
    const savedB = path.join(srv.dataDir, 'evidence', `${B.env.evidence_id}.json`);
    const originalB = fs.readFileSync(savedB);
    fs.writeFileSync(savedB, originalB.toString('utf8').replace('other capture', 'other kapture'));
    await page.goto(srv.url.replace(/\/\?token=.*$/, `/#/evidence/${B.env.evidence_id}`));
    await page.getByTestId('evidence-rejected').waitFor();
    assert.match(await page.getByTestId('evidence-rejected').innerText(), /\$\.evidence_id/);
    assert.equal(await page.locator('.xterm').count(), 0, 'a rejected file is never replayed');
    await shot(page, 'rejected-on-open');
    fs.writeFileSync(savedB, originalB);

    // Delete B (two-step) from the library.
    await page.goto(srv.url.replace(/\/\?token=.*$/, '/#/evidence'));
    const del = page.locator(`[data-testid="evidence-delete"][data-id="${B.env.evidence_id}"]`);
    await del.click();
    assert.match(await del.innerText(), /Confirm/);
    await del.click();
    await until('one row left', async () => (await page.getByTestId('evidence-row').count()) === 1);
    assert.ok(!fs.existsSync(savedB), 'the file is gone');
  });
});

test('evidence performance: open a 10 MB capture and seek at its end', { timeout: TEST_TIMEOUT }, async () => {
  // How many raw chunks a loop yields depends on how the PTY reads
  // coalesce, so the line count is adjusted until the capture is ~10 MB.
  const setup = captureSetup();
  let lines = 2300;
  let big;
  let size = 0;
  for (let attempt = 0; attempt < 4; attempt++) {
    big = await captureProcess(setup, `big${attempt}`, {
      arguments: [
        '-c',
        `i=0; while [ $i -lt ${lines} ]; do i=$((i+1)); printf 'row %05d \\033[3%dm%s\\033[0m\\n' $i $((i%7+1)) 'the quick brown fox jumps over the lazy dog 0123456789'; sleep 0.001; done; echo done`,
      ],
      timeout_ms: 120000,
      limits: { frames: 100000, output_bytes: 10000000 },
    });
    size = fs.statSync(big.file).size;
    if (size >= 9.5e6 && size <= 14e6) break;
    lines = Math.round((lines * 10.5e6) / size);
  }
  const rec = big.env.normalized_result;
  assert.ok(size >= 9.5e6 && size <= 14e6, `capture is about 10 MB (${size} bytes)`);
  assert.equal(rec.truncated, false);

  // A file one byte over the 64 MiB import limit is refused before parsing.
  const huge = path.join(tempDir('huge'), 'huge.json');
  fs.writeFileSync(huge, Buffer.alloc(64 * 1024 * 1024 + 1, 0x20));

  await withUI('perf', async (page, srv) => {
    await page.getByTestId('evidence-file-input').setInputFiles([huge]);
    const tooBig = page.locator('[data-testid="evidence-import-outcome"][data-name="huge.json"][data-state="rejected"]');
    await tooBig.waitFor({ timeout: 60_000 });
    const why = await tooBig.innerText();
    assert.match(why, /input_too_large/);
    assert.match(why, /67108864 bytes \(64 MiB\) are refused before parsing/);
    const evDir = path.join(srv.dataDir, 'evidence');
    assert.ok(!fs.existsSync(evDir) || fs.readdirSync(evDir).length === 0, 'nothing saved');
    await page.getByTestId('evidence-imports-dismiss').click();

    await page.getByTestId('evidence-file-input').setInputFiles([big.file]);
    await page.locator('[data-testid="evidence-import-outcome"][data-state="imported"]').waitFor({ timeout: 60_000 });
    const opens = [];
    for (let i = 0; i < 3; i++) {
      await page.goto(page.url().replace(/#.*$/, '#/evidence'));
      await page.getByTestId('evidence-row').first().waitFor();
      const t0 = Date.now();
      await page.getByTestId('evidence-row').first().click();
      await until('player ready', () => page.getByTestId('evidence-detail').getAttribute('data-ready'), 60_000, 10);
      const d = page.getByTestId('evidence-detail');
      opens.push({ wall: Date.now() - t0, page: Number(await d.getAttribute('data-open-ms')), fetch: Number(await d.getAttribute('data-fetch-ms')) });
    }
    const seeks = [];
    for (let i = 0; i < 10; i++) {
      await pressAndSeek(page, 'Home');
      seeks.push((await pressAndSeek(page, 'End')).latency);
    }
    const last = rec.rendered_frames[rec.rendered_frames.length - 1];
    assertScreen(await screen(page), last, 'end of the 10 MB capture');
    const mid = [];
    for (let i = 0; i < 10; i++) {
      await pressAndSeek(page, 'Home');
      for (let k = 0; k < 5; k++) mid.push((await pressAndSeek(page, 'ArrowRight')).latency);
    }
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const max = (xs) => Math.max(...xs);
    console.log(
      `evidence perf: capture ${(size / 1e6).toFixed(2)} MB, ${rec.frames.length} raw / ${rec.rendered_frames.length} rendered frames; ` +
        `open (click → first screen) median ${median(opens.map((o) => o.page)).toFixed(0)} ms in page, of which GetEvidence (backend re-verification + transfer + JSON parse) ${median(opens.map((o) => o.fetch)).toFixed(0)} ms, ${median(opens.map((o) => o.wall))} ms wall (runs: ${opens.map((o) => o.page.toFixed(0)).join(', ')}); ` +
        `seek to end median ${median(seeks).toFixed(1)} ms, max ${max(seeks).toFixed(1)} ms (goal < 100 ms); ` +
        `1 s steps median ${median(mid).toFixed(1)} ms, max ${max(mid).toFixed(1)} ms`,
    );
    assert.ok(median(seeks) < 100, `seek at the end median ${median(seeks)} ms < 100 ms`);
  });
});

test('evidence attestations: export, who signed each file, import with attestation, Security key', { timeout: TEST_TIMEOUT }, async () => {
  const setup = captureSetup();
  const mine = await captureProcess(setup, 'signed-here', { arguments: ['-c', 'echo signed here'] });
  const theirs = await captureProcess(setup, 'signed-elsewhere', { arguments: ['-c', 'echo signed elsewhere'] });
  // Another installation (the capture setup's own data directory) attests its capture.
  const theirAtt = `${theirs.file}.intoto.jsonl`;
  fs.writeFileSync(theirAtt, (await run(BIN, ['evidence', 'attest', theirs.file], { env: setup.env })).stdout);
  const theirPem = (await run(BIN, ['evidence', 'key', 'show', '--pem'], { env: setup.env })).stdout;
  const theirFp = JSON.parse((await run(BIN, ['evidence', 'key', 'show'], { env: setup.env })).stdout).fingerprint;

  await withUI('attest', async (page, srv) => {
    await setTheme(page, 'light');
    const badgeOf = (id) => page.locator(`[data-testid="evidence-row"][data-id="${id}"] [data-testid="evidence-signature"]`);

    await page.getByTestId('evidence-file-input').setInputFiles([mine.file]);
    await until('imported', async () => (await page.getByTestId('evidence-row').count()) === 1);
    assert.equal(await badgeOf(mine.env.evidence_id).getAttribute('data-status'), 'unsigned');

    // Export attestation: signed with this installation's key and kept next to the file.
    // The browser downloads the exact Evidence file and its attestation.
    const downloads = [];
    page.on('download', (d) => downloads.push(d));
    await page.locator(`[data-testid="evidence-attest"][data-id="${mine.env.evidence_id}"]`).click();
    await until('two downloads', () => downloads.length === 2);
    const got = tempDir('downloads');
    for (const d of downloads) await d.saveAs(path.join(got, d.suggestedFilename()));
    assert.deepEqual(fs.readdirSync(got).sort(), ['signed-here.json', 'signed-here.json.intoto.jsonl'], 'named after the imported file');
    assert.ok(fs.readFileSync(path.join(got, 'signed-here.json')).equals(fs.readFileSync(mine.file)), 'the downloaded Evidence is the exact file');
    await until('signed badge', async () => (await badgeOf(mine.env.evidence_id).getAttribute('data-status')) === 'installation');
    assert.equal(await badgeOf(mine.env.evidence_id).innerText(), 'signed by this installation');
    const kept = path.join(srv.dataDir, 'evidence', `${mine.env.evidence_id}.json.intoto.jsonl`);
    assert.ok(fs.existsSync(kept), 'the attestation is kept next to the file');

    // An attestation and its file picked together: imported, signed by a key not trusted yet.
    await page.getByTestId('evidence-file-input').setInputFiles([theirs.file, theirAtt]);
    await until('two rows', async () => (await page.getByTestId('evidence-row').count()) === 2);
    assert.equal(await badgeOf(theirs.env.evidence_id).getAttribute('data-status'), 'untrusted');
    assert.ok(fs.existsSync(path.join(srv.dataDir, 'evidence', `${theirs.env.evidence_id}.json.intoto.jsonl`)), 'the imported attestation is kept');
    // An attestation without its Evidence file is refused with the reason.
    await page.getByTestId('evidence-file-input').setInputFiles([theirAtt]);
    await page.locator('[data-testid="evidence-import-outcome"][data-state="rejected"]').waitFor();
    await page.getByTestId('evidence-imports-dismiss').click();

    // Security: the public key, its fingerprint and PEM; trust the other installation.
    await page.goto(page.url().replace(/#.*$/, '#/security/signing'));
    await page.getByTestId('signing-key').first().waitFor();
    const pem = await page.getByTestId('signing-pem').innerText();
    const fp = await page.getByTestId('signing-fingerprint').first().innerText();
    assert.match(pem, /-----BEGIN PUBLIC KEY-----/);
    // The UI's PEM verifies the UI's export with the CLI of another data directory.
    const pemFile = path.join(tempDir('pem'), 'pub.pem');
    fs.writeFileSync(pemFile, pem.trim() + '\n');
    const attFile = path.join(got, 'signed-here.json.intoto.jsonl');
    assert.ok(fs.readFileSync(attFile).equals(fs.readFileSync(kept)), 'the download is the attestation kept next to the file');
    const v = JSON.parse((await run(BIN, ['evidence', 'verify', path.join(got, 'signed-here.json'), '--attestation', attFile, '--key', pemFile], { env: { ...setup.env, GATEHOUSE_DATA_DIR: path.join(tempDir('verifier'), 'data') } })).stdout);
    assert.equal(v.attestation.fingerprint, fp);
    assert.equal(v.attestation.signed_by, 'given');

    await page.getByTestId('trust-pem').fill(theirPem);
    await page.getByTestId('trust-add').click();
    await page.locator(`[data-testid="trusted-key"][data-fingerprint="${theirFp}"]`).waitFor();
    await page.locator('#signing').scrollIntoViewIfNeeded();
    await screenshot(page, 'evidence-signing-security', { fullPage: false });

    await page.goto(page.url().replace(/#.*$/, '#/evidence'));
    await until('trusted badge', async () => (await badgeOf(theirs.env.evidence_id).getAttribute('data-status')) === 'trusted');
    assert.match(await badgeOf(theirs.env.evidence_id).innerText(), /^signed by SHA256:/);
    await shot(page, 'library-signatures-light');
  }, { acceptDownloads: true });
});

// End-to-end test of the compare view and asciicast interchange.
//
// Two real captures of the same program are made with `gatehouse
// capture-process` (the third line it prints differs: "step 3 alpha" /
// "step 3 bravo"), imported into a fresh `gatehouse serve`, and compared
// in Debian's Chromium (behaviour mode, the default): after "Compare" both
// sides open at the first divergence with the divergent row highlighted
// and its differing characters marked, the divergence card says what
// differs in words, the trace spec verdict and diagnostic show, and a
// capture exported as asciicast and imported again replays to the same
// screen. Two more captures whose 1,100 HTTP requests differ are paged
// through (2,200 protocol differences). Screenshots (light and dark) land
// in frontend/test-results/screenshots/compare-*.png.
//
//   cd frontend && GATEHOUSE_BIN=/abs/path/bin/gatehouse-e2e node e2e/compare.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BIN, SHOTS, WAIT, captureEnv, clearShots, pageApi, screenshot, setTheme, tempDir, until, withApp } from './harness.mjs';

// ---- the program and its captures -------------------------------------------

// Three steps in the first 400 ms (all at 0 ms with a 1000 ms time bucket),
// then "done" after a pause: the first divergence is the third raw frame.
// Steps 0.3 s apart so a loaded machine still reads them as separate
// chunks; all three fall in the first 1000 ms time bucket, "done" later.
// The program runs from a file written before each capture, so both runs
// have the same command line and differ only in what they print.
const script = (word) => `printf 'step 1\\n'; sleep 0.3; printf 'step 2\\n'; sleep 0.3; printf 'step 3 ${word}\\n'; sleep 1.0; printf 'done\\n'\n`;
// 1,100 requests on one connection; the paths differ between the runs.
const manyRequests = (word) => `curl -sS "$GATEHOUSE_REPLAY_HTTP_URL/${word}/[1-1100]" > /dev/null\necho requested\n`;

const TRACE = JSON.stringify(
  {
    version: 1,
    events: [
      { id: 'step1', source: 'terminal_raw', exact: { data: 'step 1\r\n' }, ignore_fields: ['sequence', 'at_ms'] },
      { id: 'step2', source: 'terminal_raw', exact: { data: 'step 2\r\n' }, ignore_fields: ['sequence', 'at_ms'] },
      { id: 'step3', source: 'terminal_raw', exact: { data: 'step 3 alpha\r\n' }, ignore_fields: ['sequence', 'at_ms'] },
      { id: 'done', source: 'terminal_raw', exact: { data: 'done\r\n' }, ignore_fields: ['sequence', 'at_ms'] },
    ],
    language: {
      kind: 'partial_order',
      happens_before: [
        { before: 'step1', after: 'step2' },
        { before: 'step2', after: 'step3' },
        { before: 'step3', after: 'done' },
      ],
    },
  },
  null,
  2,
);

/** Runs `gatehouse capture-process` for real and returns the Evidence text. */
function captureProcess(work, dataDir, word, program = script, extra = { normalization: { time_bucket_ms: 1000 } }) {
  const scenario = path.join(work, `scenario-${word}.json`);
  fs.writeFileSync(path.join(work, 'prog.sh'), program(word));
  fs.writeFileSync(
    scenario,
    JSON.stringify({
      approved: true,
      executable: '/bin/sh',
      arguments: ['prog.sh'],
      working_directory: work,
      environment: { PATH: '/usr/bin:/bin' },
      terminal: { columns: 60, rows: 8 },
      ...extra,
    }),
  );
  const env = { ...process.env, GATEHOUSE_DATA_DIR: dataDir, ...captureEnv(work, { GATEHOUSE_PROCESS_ALLOWED_ENV_JSON: '["PATH"]' }) };
  const r = spawnSync(BIN, ['capture-process', scenario], { env, encoding: 'utf8', timeout: WAIT });
  assert.equal(r.status, 0, `capture-process ${word} failed: ${r.stderr}`);
  const ev = JSON.parse(r.stdout);
  assert.equal(ev.predicate_type, 'gatehouse.process-capture/v4');
  return { text: r.stdout, ev };
}

// ---- helpers ------------------------------------------------------------------

/** The rows xterm.js shows inside a container, as text. */
async function screenRows(page, testid) {
  return page.locator(`[data-testid="${testid}"] .xterm-rows > div`).evaluateAll((rows) => rows.map((r) => r.textContent.replace(/\u00a0/g, ' ').trimEnd()));
}

/** The character marks painted beneath a screen's text: row, first
 * column and width in cells. */
async function marks(page, testid) {
  return page.locator(`[data-testid="${testid}"] .player-mark`).evaluateAll((els) => els.map((e) => [Number(e.dataset.row), Number(e.dataset.col), Number(e.dataset.cols)]));
}

async function highlighted(page, testid) {
  return page.locator(`[data-testid="${testid}"] .player-highlight`).evaluateAll((els) => els.map((e) => Number(e.dataset.row)));
}

/** A screenshot of the whole compare page: the app scrolls inside its
 * page element, so the viewport is made as tall as the page for the shot
 * (and put back afterwards). */
async function shot(page, name) {
  const file = path.join(SHOTS, `compare-${name}.png`);
  const vp = page.viewportSize();
  const h = await page.locator('.compare-view').evaluate((e) => e.scrollHeight + 48);
  await page.setViewportSize({ width: vp.width, height: Math.min(3000, Math.max(vp.height, h)) });
  await page.locator('.compare-view').evaluate((e) => e.scrollTo(0, 0));
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  await page.screenshot({ path: file });
  await page.setViewportSize(vp);
  return file;
}

// ---- the test -------------------------------------------------------------------

test('compare two real captures, jump to the first divergence, trace spec, asciicast round trip', { timeout: 180_000 }, async () => {
  clearShots('compare-');
  const work = tempDir('work');
  const capData = tempDir('capdata');
  const alpha = captureProcess(work, capData, 'alpha');
  const bravo = captureProcess(work, capData, 'bravo');

  await withApp({ name: 'compare', browser: { acceptDownloads: true } }, async ({ srv, page }) => {
    // Import both captures into the fresh library (verified on import).
    for (const [name, c] of [['alpha.json', alpha], ['bravo.json', bravo]]) {
      const r = await pageApi(page, 'ImportEvidence', { name, data: Buffer.from(c.text).toString('base64') });
      assert.equal(r.item.evidence_id, c.ev.evidence_id);
    }

    // Pick the two captures, paste the trace spec, compare and save.
    await page.goto(new URL('/#/compare', srv.url).href);
    const left = page.locator('[data-testid="compare-left"]');
    await until('both captures listed', async () => (await left.locator('option').count()) === 3);
    await left.selectOption(alpha.ev.evidence_id);
    await page.locator('[data-testid="compare-right"]').selectOption(bravo.ev.evidence_id);
    await page.locator('.cmp-trace-input > summary').click();
    await page.locator('[data-testid="trace-spec"]').fill(TRACE);
    await page.locator('[data-testid="compare-save"]').check();
    await page.locator('[data-testid="compare-run"]').click();
    await page.locator('[data-testid="comparison"]').waitFor();
    await until('both screens drawn', async () => (await screenRows(page, 'screen-left')).length === 8 && (await screenRows(page, 'screen-right')).length === 8);

    // The verdicts come from the backend (behaviour mode): only the terminal
    // changed, first at the stream byte in frames[2].
    assert.equal(await page.locator('[data-testid="compare-mode"]').getAttribute('data-mode'), 'behavior');
    assert.equal(await page.locator('[data-testid="overall-status"]').getAttribute('data-status'), 'changed');
    assert.equal(await page.locator('[data-testid="dim-terminal"]').getAttribute('data-status'), 'changed');
    for (const d of ['interaction', 'exit', 'filesystem', 'protocol', 'process', 'shim']) {
      assert.equal(await page.locator(`[data-testid="dim-${d}"]`).getAttribute('data-status'), 'unchanged', d);
    }
    assert.equal(await page.locator('[data-testid="dim-strip"] .cmp-dim').count(), 7);
    assert.equal(await page.locator('[data-testid="divergence-words"]').textContent(), "Terminal row 3: 'step 3 alpha' → 'step 3 bravo'");
    assert.match(await page.locator('[data-testid="divergence-text"]').textContent(), /Terminal diverges first, item 0 at 0:00\.000 \(left frames\[2\], right frames\[2\]\)/);
    await page.locator('[data-testid="comparison-id"]').waitFor(); // saved as Evidence

    // Compare opened both sides at the divergence: row 2 highlighted, its
    // differing characters marked on both sides, "done" not yet printed.
    await until('opened at the divergence', async () => JSON.stringify(await highlighted(page, 'screen-left')) === '[2]' && JSON.stringify(await highlighted(page, 'screen-right')) === '[2]');
    assert.ok(!(await screenRows(page, 'screen-left')).includes('done') && !(await screenRows(page, 'screen-right')).includes('done'));
    // "step 3 alpha" / "step 3 bravo": only the words differ (columns 7–11),
    // their common "a" left unmarked.
    const lm = await marks(page, 'screen-left');
    const rm = await marks(page, 'screen-right');
    assert.ok(lm.length > 0 && rm.length > 0, `marks ${JSON.stringify(lm)} / ${JSON.stringify(rm)}`);
    for (const [row, col, n] of [...lm, ...rm]) assert.ok(row === 2 && col >= 7 && col + n <= 12, `mark ${row},${col},${n}`);
    // The mark is painted beneath the text layer, never over a glyph.
    assert.equal(await page.locator('[data-testid="screen-left"] .player-marks').evaluate((e) => getComputedStyle(e).zIndex), '-1');
    // The final screens side by side: row 3 differs, its characters marked.
    assert.match(await page.locator('[data-testid="final-screens"]').textContent(), /1 row differs \(row 3\)/);
    assert.ok((await page.locator('[data-testid="final-right"] .is-diff mark').count()) > 0);
    await shot(page, 'divergence');

    // Go to the end first: "done" is on both screens.
    await page.locator('[data-testid="compare-timeline"]').focus();
    await page.keyboard.press('End');
    await until('end of both captures', async () => (await screenRows(page, 'screen-left')).includes('done') && (await screenRows(page, 'screen-right')).includes('done'));

    // Jump to the first divergence: both sides seek to 0 ms (before "done"),
    // and the divergent row (row 2, "step 3 …") is highlighted on both.
    await page.locator('[data-testid="jump-divergence"]').click();
    await until('both sides at the divergence', async () => (await page.locator('[data-testid="screen-left"]').getAttribute('data-time')) === '0' && (await page.locator('[data-testid="screen-right"]').getAttribute('data-time')) === '0' && !(await screenRows(page, 'screen-left')).includes('done'));
    const lrows = await screenRows(page, 'screen-left');
    const rrows = await screenRows(page, 'screen-right');
    assert.deepEqual(lrows.slice(0, 3), ['step 1', 'step 2', 'step 3 alpha']);
    assert.deepEqual(rrows.slice(0, 3), ['step 1', 'step 2', 'step 3 bravo']);
    assert.ok(!rrows.includes('done'), 'the right side is at the divergence too');
    await until('row 2 highlighted on both sides', async () => JSON.stringify(await highlighted(page, 'screen-left')) === '[2]' && JSON.stringify(await highlighted(page, 'screen-right')) === '[2]');
    assert.match(await page.locator('[data-testid="rows-note"]').textContent(), /1 row differs here \(row 3\)/);
    // The first divergence is the selected item of the terminal diff list.
    assert.equal(await page.locator('[data-testid="diff-item"].is-first.selected').getAttribute('data-index'), '0');

    // The trace spec verdict and its diagnostic, pointing at the journal.
    assert.equal(await page.locator('[data-testid="trace-verdict"]').getAttribute('data-verdict'), 'different');
    const diag = page.locator('[data-testid="trace-diagnostic"]');
    assert.match(await diag.textContent(), /predicate · right.*matches no declared event/s);
    await page.locator('[data-testid="compare-timeline"]').focus();
    await page.keyboard.press('End');
    await until('back at the end', async () => (await screenRows(page, 'screen-right')).includes('done'));
    await diag.locator('[data-testid="trace-location"]', { hasText: 'frames[2]' }).click();
    await until('the diagnostic location shown', async () => (await page.locator('[data-testid="screen-right"]').getAttribute('data-time')) === '0' && !(await screenRows(page, 'screen-right')).includes('done'));

    // Synchronized playback: one clock plays both sides to the end.
    await page.locator('[data-testid="compare-play"]').click();
    await until('both sides played to the end', async () =>
      (await page.locator('[data-testid="compare-time"]').textContent()).split(' / ').every((x, _, all) => x === all[0]) &&
      (await screenRows(page, 'screen-left')).includes('done') && (await screenRows(page, 'screen-right')).includes('done'));

    await setTheme(page, 'light');
    await page.locator('[data-testid="jump-divergence"]').click();
    await shot(page, 'light');
    await setTheme(page, 'dark');
    await until('dark terminal', async () => (await page.locator('[data-testid="screen-left"] .xterm-viewport').evaluate((e) => getComputedStyle(e.closest('.ev-screen')).backgroundColor)) !== 'rgb(251, 251, 252)');
    await shot(page, 'dark');
    await setTheme(page, 'light');

    // Asciicast round trip: export the left capture, import the file,
    // and the replayed final screen is the capture's final rendered frame.
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-testid="export-left"]').click()]);
    const castFile = path.join(work, 'alpha.cast');
    await download.saveAs(castFile);
    const castText = fs.readFileSync(castFile, 'utf8');
    assert.match(castText, /^\{"version":2,"width":60,"height":8,/);
    assert.match(castText, /\[0\.000, "o", "step 3 alpha\\r\\n"\]/);
    await page.locator('[data-testid="import-cast"]').setInputFiles(castFile);
    await page.locator('[data-testid="imported-screen"][data-ready="true"]').waitFor();
    // xterm.js draws only terminals in view: scroll there, then read.
    await page.locator('[data-testid="imported-recording"]').scrollIntoViewIfNeeded();
    const finalFrame = alpha.ev.normalized_result.rendered_frames.at(-1);
    const want = JSON.stringify(finalFrame.lines.map((l) => l.trimEnd()));
    await until(`the imported recording replayed to the capture's final screen ${want}`, async () => JSON.stringify(await screenRows(page, 'imported-screen')) === want);
    assert.equal(await page.locator('[data-testid="imported-dim-terminal"]').getAttribute('data-status'), 'observed');
    for (const d of ['interaction', 'exit', 'filesystem', 'protocol', 'process', 'shim']) {
      assert.equal(await page.locator(`[data-testid="imported-dim-${d}"]`).getAttribute('data-status'), 'unknown', `${d} of an imported recording`);
    }
    assert.match(await page.locator('[data-testid="imported-recording"]').textContent(), /Imported asciicast — terminal only/);
    // Seeking the imported recording to 0 ms shows the screen before "done".
    await page.locator('[data-testid="imported-timeline"]').fill('0');
    await until('imported at 0 ms', async () => (await page.locator('[data-testid="imported-screen"]').getAttribute('data-time')) === '0' && !(await screenRows(page, 'imported-screen')).includes('done'));
    await page.locator('[data-testid="imported-timeline"]').fill(String(await page.locator('[data-testid="imported-timeline"]').getAttribute('max')));
    await until('imported at the end', async () => (await screenRows(page, 'imported-screen')).includes('done'));
    await shot(page, 'asciicast');

    // A malformed file is rejected with its line and path; nothing is imported.
    const bad = path.join(work, 'bad.cast');
    fs.writeFileSync(bad, '{"version": 2, "width": 10, "height": 2}\n[0.5, "o", "a"]\n[0.25, "o", "b"]\n');
    const before = (await pageApi(page, 'ListEvidence')).evidence.length;
    await page.locator('[data-testid="import-cast"]').setInputFiles(bad);
    const issues = page.locator('[data-testid="import-issues"]');
    await issues.waitFor();
    assert.match(await issues.textContent(), /line 3.*\$\[0\].*time_order/s);
    assert.equal((await pageApi(page, 'ListEvidence')).evidence.length, before);

    // The imported recording is in the library (labelled imported) and replays from its link.
    const recs = (await pageApi(page, 'ListEvidence')).evidence.filter((e) => e.predicate_type === 'gatehouse.terminal-recording/v1');
    assert.equal(recs.length, 1);
    assert.equal(recs[0].origin, 'imported');
    await page.goto(new URL(`/#/compare/recording/${recs[0].evidence_id}`, srv.url).href);
    await page.locator('[data-testid="imported-screen"][data-ready="true"]').waitFor();
    await page.locator('[data-testid="imported-recording"]').scrollIntoViewIfNeeded();
    await until('the saved recording replayed to the final screen', async () => JSON.stringify(await screenRows(page, 'imported-screen')) === want);

    // The saved comparison opens again and re-checks to the same result.
    const list = (await pageApi(page, 'ListEvidence')).evidence.filter((e) => e.predicate_type === 'gatehouse.process-comparison/v4');
    assert.equal(list.length, 1);
    await page.goto(new URL(`/#/compare/open/${list[0].evidence_id}`, srv.url).href);
    await until('reopened comparison', async () => (await page.locator('[data-testid="comparison"]').count()) === 1 && (await page.locator('[data-testid="comparison"]').textContent()).includes('re-checked: same result'));

    // A tampered comparison file is rejected with its failing path.
    const saved = await pageApi(page, 'GetEvidence', { id: list[0].evidence_id });
    const tampered = path.join(work, 'tampered-comparison.json');
    fs.writeFileSync(tampered, JSON.stringify(saved.evidence).replace('"verdict":"different"', '"verdict":"equivalent"'));
    assert.notEqual(fs.readFileSync(tampered, 'utf8'), JSON.stringify(saved.evidence), 'the file was altered');
    await page.locator('[data-testid="open-comparison-file"]').setInputFiles(tampered);
    const refused = page.locator('[data-testid="compare-error"]');
    await refused.waitFor();
    assert.match(await refused.textContent(), /evidence_integrity_mismatch.*\$\.evidence_id/s);
    assert.equal(await page.locator('[data-testid="comparison"]').count(), 0, 'nothing is shown as a comparison');

    // The exact mode keeps the item-by-item rules: the raw frames compared
    // index by index, the first divergence the third one.
    await page.goto(new URL(`/#/compare/${alpha.ev.evidence_id}/${bravo.ev.evidence_id}/exact`, srv.url).href);
    await until('the exact comparison', async () => (await page.locator('[data-testid="compare-mode"]').getAttribute('data-mode').catch(() => null)) === 'exact');
    assert.match(await page.locator('[data-testid="divergence-text"]').textContent(), /Terminal diverges first, item 2 at 0:00\.000 \(left frames\[2\], right frames\[2\]\)/);
    assert.ok(await page.locator('[data-testid="compare-mode-exact"]').isChecked());

    // Paging: 1,100 requests whose paths differ are 2,200 protocol
    // differences; every page is reachable, none cut off.
    const replay = { replay: { http: [{ method: 'GET', path: '/x', response: { body: 'x' } }] } };
    const manyA = captureProcess(work, capData, 'a', manyRequests, replay);
    const manyB = captureProcess(work, capData, 'b', manyRequests, replay);
    for (const [name, c] of [['many-a.json', manyA], ['many-b.json', manyB]]) await pageApi(page, 'ImportEvidence', { name, data: Buffer.from(c.text).toString('base64') });
    await page.goto(new URL(`/#/compare/${manyA.ev.evidence_id}/${manyB.ev.evidence_id}`, srv.url).href);
    await until('the many-request comparison', async () => (await page.locator('[data-testid="dim-protocol"]').getAttribute('data-status')) === 'changed');
    await page.locator('[data-testid="diff-tab-protocol"]').click();
    const range = page.locator('[data-testid="diff-range"]');
    assert.equal(await range.textContent(), 'Items 1–200 of 2200');
    assert.equal(await page.locator('[data-testid="diff-item"]').count(), 200);
    await page.locator('[data-testid="diff-next"]').click();
    await until('page 2', async () => (await range.textContent()) === 'Items 201–400 of 2200');
    assert.equal(await page.locator('[data-testid="diff-item"]').first().getAttribute('data-index'), '200');
    await page.locator('[data-testid="diff-last"]').click();
    await until('the last page', async () => (await range.textContent()) === 'Items 2001–2200 of 2200');
    assert.equal(await page.locator('[data-testid="diff-item"]').last().getAttribute('data-index'), '2199');
    assert.ok(await page.locator('[data-testid="diff-next"]').isDisabled());
    // Field-level highlight: the path differs, the method does not, and
    // times are not differences in behaviour mode.
    assert.equal(await page.locator('[data-testid="diff-item"]').last().locator('tr.is-diff[data-field="at_ms"]').count(), 0);
    // The first divergence is the protocol's first request, unless the
    // two runs' 50 ms process samples differ too (a loaded machine can
    // sample curl at different moments): then an earlier processes item
    // may come first (the protocol items are checked on their pages).
    const words = await page.locator('[data-testid="divergence-words"]').textContent();
    if ((await page.locator('[data-testid="dim-process"]').getAttribute('data-status')) === 'unchanged') assert.match(words, /^Protocol item 1: path '\/a\/1' → '\/b\/1'$/);
    else assert.match(words, /^(Protocol item 1: path '\/a\/1' → '\/b\/1'$|Processes item \d+\b)/);
    assert.ok((await page.locator('[data-testid="diff-item"]').last().locator('tr.is-diff[data-field="path"] mark').count()) > 0);
    assert.equal(await page.locator('[data-testid="diff-item"]').last().locator('tr.is-diff[data-field="method"]').count(), 0);
    await page.locator('[data-testid="diff-prev"]').click();
    await until('back one page', async () => (await range.textContent()) === 'Items 1801–2000 of 2200');
    await shot(page, 'paging');

  });
});

// Issue 22 item 7: the Compare view's empty state shows the command as
// code, not between literal backticks; a code span in a SKILL.md table
// (the bundled memory-organization skill) stays on one line instead of
// breaking mid-word to squeeze its column.
test('compare empty state and SKILL.md table code spans', { timeout: 60_000 }, async () => {
  await withApp({ name: 'ui-text' }, async ({ srv, page }) => {
    await page.setViewportSize({ width: 1100, height: 800 });
    await page.goto(new URL('/#/compare', srv.url).href);
    const empty = page.locator('.cmp-picker .empty');
    await empty.waitFor();
    const text = await empty.textContent();
    assert.ok(!text.includes('`'), `no literal backticks in the empty state: ${text}`);
    assert.equal(await empty.locator('code').first().textContent(), 'gatehouse capture-process');

    await page.goto(new URL('/#/skills/memory-organization', srv.url).href);
    const cells = page.locator('.markdown td code');
    await until('the skill body table', async () => (await cells.count()) > 5);
    const broken = await cells.evaluateAll((els) => els.filter((e) => e.getClientRects().length !== 1).map((e) => e.textContent));
    assert.deepEqual(broken, [], 'every code span in a table cell is on one line');
    // The table may scroll sideways but never pushes the page wider.
    const over = await page.locator('.markdown table').first().evaluate((t) => t.getBoundingClientRect().right - t.closest('.markdown').getBoundingClientRect().right);
    assert.ok(over <= 1, `the table ends inside the skill body (${over} px past it)`);
    await screenshot(page, 'skill-markdown-table', { show: page.locator('.markdown table').first() });
  });
});

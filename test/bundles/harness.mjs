// Shared harness for the bundle test files in this folder: run a bundle's real
// entrypoint as a child process (like Gatehouse does) and check the protocol.
//
// Not a test file: `node --test test/bundles/` (Node 20) only picks files whose
// name matches test, test-*, *.test, *-test or *_test. The module has no
// import-time side effects, so it is harmless when a runner loads it anyway
// (e.g. `node --test test/` treats every .mjs under a "test" folder as a test).
//
// Schema checks (subset rules, input/output validation) are deliberately not
// here: they belong to the Go backend (backend/bundle), which inspects the
// shipped bundles.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const MANIFEST_KEYS = ['entrypoint', 'files', 'inputSchema', 'maxOutputBytes', 'outputSchema', 'schemaVersion', 'timeoutMs'];

/**
 * Load bundles/<name>: its folder, its parsed execution.json, and runners for
 * its entrypoint.
 *   runRaw(stdin) -> the spawnSync result (stdin is sent unchanged)
 *   run(input)    -> the parsed output of a JSON invocation, after asserting the
 *                    protocol: exit 0, empty stderr, exactly one line ending in
 *                    "\n", within maxOutputBytes, valid JSON
 */
export function loadBundle(name) {
  const dir = fileURLToPath(new URL(`../../bundles/${name}/`, import.meta.url));
  const manifest = JSON.parse(readFileSync(path.join(dir, 'execution.json'), 'utf8'));

  function runRaw(stdin) {
    const script = path.join(dir, manifest.entrypoint);
    return spawnSync('node', [script], { input: stdin, cwd: tmpdir(), encoding: 'utf8', timeout: manifest.timeoutMs });
  }

  function run(input) {
    const result = runRaw(JSON.stringify(input));
    assert.equal(result.status, 0, `exit status (stderr: ${result.stderr})`);
    assert.equal(result.stderr, '');
    assert.ok(result.stdout.endsWith('\n'), 'output ends in a newline');
    assert.equal(result.stdout.indexOf('\n'), result.stdout.length - 1, 'exactly one line of output');
    assert.ok(Buffer.byteLength(result.stdout) <= manifest.maxOutputBytes, 'within maxOutputBytes');
    return JSON.parse(result.stdout);
  }

  return { dir, manifest, runRaw, run };
}

/**
 * The strict v1 shape of execution.json: exactly the known keys,
 * schemaVersion 1, the entrypoint listed in files, files unique, and every
 * listed file an existing regular file (relative to the bundle folder).
 */
export function checkManifestShape({ dir, manifest }) {
  assert.deepEqual(Object.keys(manifest).sort(), MANIFEST_KEYS);
  assert.equal(manifest.schemaVersion, 1);
  assert.ok(Array.isArray(manifest.files), 'files is an array');
  assert.ok(manifest.files.includes(manifest.entrypoint), 'entrypoint is listed in files');
  assert.equal(new Set(manifest.files).size, manifest.files.length, 'files are unique');
  for (const file of manifest.files) {
    const full = path.join(dir, file);
    assert.ok(existsSync(full) && statSync(full).isFile(), `${file} is a regular file`);
  }
}

// Tests for bundles/text-metrics: run the real CommonJS entrypoint as a child
// process (like Gatehouse does) and compare the complete parsed output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const bundle = fileURLToPath(new URL('../../bundles/text-metrics/', import.meta.url));
const script = path.join(bundle, 'scripts', 'run.cjs');
const manifest = JSON.parse(readFileSync(path.join(bundle, 'execution.json'), 'utf8'));

function runRaw(stdin) {
  return spawnSync('node', [script], { input: stdin, cwd: tmpdir(), encoding: 'utf8', timeout: manifest.timeoutMs });
}

/** Run with a JSON invocation; assert the protocol; return the parsed output. */
function run(input) {
  assert.deepEqual(validate(manifest.inputSchema, input), [], 'input matches inputSchema');
  const result = runRaw(JSON.stringify(input));
  assert.equal(result.status, 0, `exit status (stderr: ${result.stderr})`);
  assert.equal(result.stderr, '');
  assert.equal(result.stdout.indexOf('\n'), result.stdout.length - 1, 'exactly one line of output');
  assert.ok(Buffer.byteLength(result.stdout) <= manifest.maxOutputBytes, 'within maxOutputBytes');
  const output = JSON.parse(result.stdout);
  assert.deepEqual(validate(manifest.outputSchema, output), [], 'output matches outputSchema');
  return output;
}

// --- a minimal validator for the bounded schema subset (test-only) ---------
function validate(schema, value, at = '$', issues = []) {
  if (schema.anyOf) {
    if (!schema.anyOf.some((branch) => validate(branch, value, at).length === 0)) issues.push(`${at}: no anyOf branch matches`);
    return issues;
  }
  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  const typeOk = schema.type === 'integer' ? Number.isInteger(value) : schema.type === kind;
  if (!typeOk) {
    issues.push(`${at}: expected ${schema.type}, got ${kind}`);
    return issues;
  }
  if (schema.enum && !schema.enum.includes(value)) issues.push(`${at}: not in enum`);
  if (kind === 'string') {
    const n = [...value].length;
    if (schema.minLength !== undefined && n < schema.minLength) issues.push(`${at}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && n > schema.maxLength) issues.push(`${at}: longer than ${schema.maxLength}`);
  }
  if (kind === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) issues.push(`${at}: below minimum`);
    if (schema.maximum !== undefined && value > schema.maximum) issues.push(`${at}: above maximum`);
  }
  if (kind === 'array') {
    if (schema.minItems !== undefined && value.length < schema.minItems) issues.push(`${at}: too few items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) issues.push(`${at}: too many items`);
    value.forEach((item, i) => validate(schema.items, item, `${at}[${i}]`, issues));
  }
  if (kind === 'object') {
    for (const key of schema.required ?? []) if (!(key in value)) issues.push(`${at}.${key}: required`);
    for (const [key, item] of Object.entries(value)) {
      if (schema.properties[key]) validate(schema.properties[key], item, `${at}.${key}`, issues);
      else if (schema.additionalProperties === false) issues.push(`${at}.${key}: not allowed`);
    }
  }
  return issues;
}

const ALLOWED = new Set(['type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'minLength',
  'maxLength', 'minItems', 'maxItems', 'minimum', 'maximum', 'anyOf', 'description', 'title']);
const TYPES = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

/** Check the subset rules of spec/10-skills.md; returns a list of problems. */
function subsetProblems(schema, at = '$', problems = [], depth = 1) {
  if (depth > 32) problems.push(`${at}: too deep`);
  for (const key of Object.keys(schema)) if (!ALLOWED.has(key)) problems.push(`${at}: keyword ${key} not allowed`);
  if ('anyOf' in schema) {
    if (Object.keys(schema).length !== 1) problems.push(`${at}: anyOf has siblings`);
    if (schema.anyOf.length < 2 || schema.anyOf.length > 4) problems.push(`${at}: anyOf needs 2-4 branches`);
    schema.anyOf.forEach((b, i) => subsetProblems(b, `${at}.anyOf[${i}]`, problems, depth + 1));
    return problems;
  }
  if (typeof schema.type !== 'string' || !TYPES.has(schema.type)) problems.push(`${at}: needs a single type`);
  if (schema.type === 'object') {
    if (typeof schema.properties !== 'object') problems.push(`${at}: object without properties`);
    for (const name of schema.required ?? []) if (!(name in schema.properties)) problems.push(`${at}: required ${name} undeclared`);
    if ('additionalProperties' in schema && typeof schema.additionalProperties !== 'boolean') problems.push(`${at}: additionalProperties must be boolean`);
    for (const [k, v] of Object.entries(schema.properties ?? {})) subsetProblems(v, `${at}.properties.${k}`, problems, depth + 1);
  }
  if (schema.type === 'array') {
    if (!schema.items || Array.isArray(schema.items)) problems.push(`${at}: array without a single items schema`);
    else subsetProblems(schema.items, `${at}.items`, problems, depth + 1);
  }
  if (schema.enum && !schema.enum.every((v) => v === null || typeof v !== 'object')) problems.push(`${at}: enum must be scalars`);
  return problems;
}

test('execution.json has the strict v1 shape, subset schemas and existing files', () => {
  assert.deepEqual(Object.keys(manifest).sort(), ['entrypoint', 'files', 'inputSchema', 'maxOutputBytes', 'outputSchema', 'schemaVersion', 'timeoutMs']);
  assert.equal(manifest.schemaVersion, 1);
  assert.equal(manifest.entrypoint, 'scripts/run.cjs');
  assert.equal(manifest.timeoutMs, 5000);
  assert.equal(manifest.maxOutputBytes, 16384);
  assert.deepEqual(manifest.files, ['scripts/run.cjs', 'scripts/lib/count.cjs']);
  for (const file of manifest.files) {
    assert.ok(existsSync(path.join(bundle, file)) && statSync(path.join(bundle, file)).isFile(), file);
  }
  assert.equal(manifest.inputSchema.type, 'object');
  assert.deepEqual(subsetProblems(manifest.inputSchema), []);
  assert.deepEqual(subsetProblems(manifest.outputSchema), []);
});

test('counts a known text, with non-BMP characters as one code point each', () => {
  const text = [
    'Gatehouse runs skills 🚀. Skills are small! Are skills safe? Skills are checked…',
    'Every run is staged 😀😀 and hashed.',
    '',
    'Second paragraph: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 words, don\u2019t panic, state-of-the-art runs.',
    '',
    '',
    'Third paragraph without a full stop',
  ].join('\r\n') + '\n';
  // 🚀, 😀, 😀 and the 7 Fraktur letters are surrogate pairs in UTF-16.
  assert.equal(text.length, 239);
  assert.deepEqual(run({ text }), {
    characters: 229, // 216 visible code points + 6 CRLF pairs + the final LF
    words: 32,
    lines: 7,
    sentences: 7,
    paragraphs: 3,
    reading_minutes: 0.16, // 32 / 200
    top_words: [
      { word: 'skills', count: 4 },
      { word: 'paragraph', count: 2 },
      { word: 'runs', count: 2 },
      { word: 'checked', count: 1 },
      { word: "don't", count: 1 },
      { word: 'every', count: 1 },
      { word: 'full', count: 1 },
      { word: 'gatehouse', count: 1 },
      { word: 'hashed', count: 1 },
      { word: 'panic', count: 1 },
    ],
  });
});

test('emoji and compatibility letters: code points, not words; NFKC when ranking', () => {
  assert.deepEqual(run({ text: '😀' }), {
    characters: 1, words: 0, lines: 1, sentences: 0, paragraphs: 1, reading_minutes: 0, top_words: [],
  });
  assert.deepEqual(run({ text: '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 unicode UNICODE 👍🏽' }), {
    characters: 26, // 7 + 1 + 7 + 1 + 7 + 1 + 2 (thumbs up + skin tone modifier)
    words: 3,
    lines: 1,
    sentences: 1,
    paragraphs: 1,
    reading_minutes: 0.02,
    top_words: [{ word: 'unicode', count: 3 }],
  });
});

test('empty text', () => {
  assert.deepEqual(run({ text: '' }), {
    characters: 0, words: 0, lines: 0, sentences: 0, paragraphs: 0, reading_minutes: 0, top_words: [],
  });
  assert.deepEqual(run({ text: '\n\n  \n' }), {
    characters: 5, words: 0, lines: 3, sentences: 0, paragraphs: 0, reading_minutes: 0, top_words: [],
  });
});

test('top_words: stopwords and numbers excluded, ties ordered by word, at most 10', () => {
  const text = 'b a c b the a c d 42 1999 zeta eta theta iota kappa lambda mu nu xi omicron';
  assert.deepEqual(run({ text }).top_words, [
    { word: 'b', count: 2 },
    { word: 'c', count: 2 },
    { word: 'd', count: 1 },
    { word: 'eta', count: 1 },
    { word: 'iota', count: 1 },
    { word: 'kappa', count: 1 },
    { word: 'lambda', count: 1 },
    { word: 'mu', count: 1 },
    { word: 'nu', count: 1 },
    { word: 'omicron', count: 1 },
  ]);
});

test('words_per_minute sets the reading time', () => {
  const text = Array.from({ length: 300 }, (_, i) => `word${i % 7}`).join(' ');
  assert.equal(run({ text, words_per_minute: 100 }).reading_minutes, 3);
  assert.equal(run({ text, words_per_minute: 1000 }).reading_minutes, 0.3);
  assert.equal(run({ text }).reading_minutes, 1.5);
});

test('assets/example-output.json matches a real run of assets/example-input.json', () => {
  const input = JSON.parse(readFileSync(path.join(bundle, 'assets', 'example-input.json'), 'utf8'));
  const expected = JSON.parse(readFileSync(path.join(bundle, 'assets', 'example-output.json'), 'utf8'));
  assert.deepEqual(run(input), expected);
});

test('unparseable or invalid stdin: exit 2, nothing on stdout, a message on stderr', () => {
  const cases = ['{"text": ', '', Buffer.from([0x7b, 0xff, 0x7d]), '[]', '{"txt": "x"}', '{"text": 5}',
    '{"text": "x", "words_per_minute": 10}', '{"text": "x", "words_per_minute": 200.5}'];
  for (const stdin of cases) {
    const result = runRaw(stdin);
    assert.equal(result.status, 2, String(stdin));
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /^text-metrics: .+\n$/);
  }
});

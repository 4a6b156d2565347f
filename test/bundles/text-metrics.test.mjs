// Tests for bundles/text-metrics: run the real CommonJS entrypoint as a child
// process (like Gatehouse does) and compare the complete parsed output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { checkManifestShape, loadBundle } from './harness.mjs';

const bundle = loadBundle('text-metrics');
const { manifest, run, runRaw } = bundle;

test('execution.json has the strict v1 shape and existing files', () => {
  checkManifestShape(bundle);
  assert.equal(manifest.entrypoint, 'scripts/run.cjs');
  assert.equal(manifest.timeoutMs, 5000);
  assert.equal(manifest.maxOutputBytes, 16384);
  assert.deepEqual(manifest.files, ['scripts/run.cjs', 'scripts/lib/count.cjs']);
  assert.equal(manifest.inputSchema.type, 'object');
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
  const input = JSON.parse(readFileSync(path.join(bundle.dir, 'assets', 'example-input.json'), 'utf8'));
  const expected = JSON.parse(readFileSync(path.join(bundle.dir, 'assets', 'example-output.json'), 'utf8'));
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

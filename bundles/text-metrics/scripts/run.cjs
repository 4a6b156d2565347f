'use strict';
// text-metrics: character, word, line, sentence and paragraph counts, reading
// time and the most frequent words of a text.
//
// Protocol (Gatehouse checked execution):
//   stdin  one JSON object {"text": string, "words_per_minute"?: integer 50..1000}
//   stdout exactly one JSON object with the metrics, exit 0
//   invalid UTF-8/JSON or an invalid invocation: nothing on stdout, a message
//   on stderr, exit 2

const process = require('node:process');
const { Buffer } = require('node:buffer');
const { analyze, DEFAULT_WORDS_PER_MINUTE } = require('./lib/count.cjs');

const MAX_TEXT = 200000;
const KNOWN = new Set(['text', 'words_per_minute']);

function fail(message) {
  process.stderr.write(`text-metrics: ${message}\n`);
  process.exitCode = 2;
}

function check(input) {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return 'input must be a JSON object';
  for (const key of Object.keys(input)) {
    if (!KNOWN.has(key)) return `unknown property ${JSON.stringify(key.slice(0, 40))}`;
  }
  if (typeof input.text !== 'string') return '"text" must be a string';
  let length = 0;
  for (const _ of input.text) if (++length > MAX_TEXT) return `"text" must be at most ${MAX_TEXT} characters`;
  const wpm = input.words_per_minute;
  if (wpm !== undefined && !(Number.isInteger(wpm) && wpm >= 50 && wpm <= 1000)) {
    return '"words_per_minute" must be an integer between 50 and 1000';
  }
  return null;
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  let input;
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
    input = JSON.parse(text);
  } catch {
    return fail('stdin is not valid UTF-8 JSON');
  }
  const problem = check(input);
  if (problem) return fail(problem);
  const result = analyze(input.text, input.words_per_minute ?? DEFAULT_WORDS_PER_MINUTE);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error) => {
  process.stderr.write(`text-metrics: internal error: ${String(error?.message ?? error).slice(0, 200)}\n`);
  process.exitCode = 1;
});

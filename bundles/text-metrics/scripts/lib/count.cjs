'use strict';
// Text metrics: pure counting functions used by ../run.cjs.
// Definitions are documented in references/REFERENCE.md.

const DEFAULT_WORDS_PER_MINUTE = 200;
const TOP_WORDS = 10;
const MAX_RANKED_WORD_LENGTH = 64;

// A word: letters, digits and combining marks, optionally joined by a single
// apostrophe or hyphen ("don't", "state-of-the-art", "2.0" is two words).
const WORD = /[\p{L}\p{N}\p{M}]+(?:['\u2019\-][\p{L}\p{N}\p{M}]+)*/gu;

// Sentence terminators (., !, ?, ellipsis, CJK full stops), optional closing
// quotes/brackets, then whitespace or the end; or a blank line.
const SENTENCE_BREAK = /[.!?\u2026]+["'\u201D\u2019\u00BB)\]]*(?=\s|$)|[\u3002\uFF01\uFF1F]+|\n[ \t]*\n/u;
const HAS_WORD = /[\p{L}\p{N}]/u;
const PARAGRAPH_BREAK = /\n\s*\n/u;
const ONLY_DIGITS = /^[\p{N}'\-]+$/u;

const STOPWORDS = new Set([
  'a', 'about', 'after', 'all', 'also', 'am', 'an', 'and', 'any', 'are', 'as',
  'at', 'be', 'because', 'been', 'but', 'by', 'can', 'could', 'did', 'do',
  'does', 'for', 'from', 'had', 'has', 'have', 'he', 'her', 'his', 'how', 'i',
  'if', 'in', 'into', 'is', 'it', "it's", 'its', 'just', 'me', 'more', 'my',
  'no', 'not', 'of', 'on', 'or', 'our', 'out', 'she', 'so', 'some', 'than',
  'that', 'the', 'their', 'them', 'then', 'there', 'these', 'they', 'this',
  'to', 'up', 'us', 'was', 'we', 'were', 'what', 'when', 'which', 'who',
  'will', 'with', 'would', 'you', 'your',
]);

/** Unify line endings: CRLF and lone CR become LF. */
function normalizeNewlines(text) {
  return text.replace(/\r\n?/g, '\n');
}

/** Unicode code points (an emoji such as U+1F600 counts once). */
function countCharacters(text) {
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

function words(text) {
  return text.match(WORD) ?? [];
}

/** Lines: 0 for empty text; a final line break does not start a new line. */
function countLines(text) {
  const t = normalizeNewlines(text);
  if (t === '') return 0;
  let breaks = 0;
  for (const ch of t) if (ch === '\n') breaks += 1;
  return t.endsWith('\n') ? breaks : breaks + 1;
}

/** Sentences: pieces between terminators (or blank lines) that contain a word. */
function countSentences(text) {
  const pieces = normalizeNewlines(text).split(SENTENCE_BREAK);
  return pieces.filter((piece) => HAS_WORD.test(piece)).length;
}

/** Paragraphs: non-blank blocks separated by one or more blank lines. */
function countParagraphs(text) {
  return normalizeNewlines(text)
    .split(PARAGRAPH_BREAK)
    .filter((block) => block.trim() !== '').length;
}

/** The most frequent words (lower-cased, NFKC), minus stopwords and numbers. */
function topWords(wordList, limit = TOP_WORDS) {
  const counts = new Map();
  for (const raw of wordList) {
    const word = raw.normalize('NFKC').toLowerCase().replace(/\u2019/g, "'");
    if (STOPWORDS.has(word) || ONLY_DIGITS.test(word)) continue;
    if (countCharacters(word) > MAX_RANKED_WORD_LENGTH) continue;
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, limit)
    .map(([word, count]) => ({ word, count }));
}

/** Reading time in minutes, rounded to 2 decimals. */
function readingMinutes(wordCount, wordsPerMinute) {
  return Math.round((wordCount / wordsPerMinute) * 100) / 100;
}

function analyze(text, wordsPerMinute = DEFAULT_WORDS_PER_MINUTE) {
  const wordList = words(text);
  return {
    characters: countCharacters(text),
    words: wordList.length,
    lines: countLines(text),
    sentences: countSentences(text),
    paragraphs: countParagraphs(text),
    reading_minutes: readingMinutes(wordList.length, wordsPerMinute),
    top_words: topWords(wordList),
  };
}

module.exports = {
  DEFAULT_WORDS_PER_MINUTE,
  MAX_RANKED_WORD_LENGTH,
  STOPWORDS,
  analyze,
  countCharacters,
  countLines,
  countParagraphs,
  countSentences,
  readingMinutes,
  topWords,
  words,
};

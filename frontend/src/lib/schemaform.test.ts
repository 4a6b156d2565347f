import { describe, expect, it } from 'vitest';
import { buildForm, encode, fromValue, initialState, parseRaw, toText, TEXTAREA_OVER, type FormModel } from './schemaform';

function model(schema: unknown): FormModel {
  const r = buildForm(schema);
  if (!r.ok) throw new Error('expected a form: ' + r.reason);
  return r.model;
}

/** raw text → form state → JSON value: must give back the same value. */
function roundTrip(m: FormModel, value: unknown): unknown {
  const r = parseRaw(m, JSON.stringify(value));
  if (!r.ok) throw new Error('not representable: ' + r.reason);
  const enc = encode(m, r.state);
  expect(enc.errors).toEqual({});
  return JSON.parse(toText(enc.value));
}

const kitchenSink = {
  type: 'object',
  title: 'sink',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 40, description: 'Who' },
    text: { type: 'string', maxLength: 200000 },
    count: { type: 'integer', minimum: 1, maximum: 10 },
    ratio: { type: 'number', minimum: 0, maximum: 1 },
    loud: { type: 'boolean' },
    color: { enum: ['red', 'green', 'blue'] },
    level: { type: 'integer', enum: [1, 2, 3] },
    tags: { type: 'array', items: { type: 'string' }, maxItems: 5 },
    scores: { type: 'array', items: { type: 'number' } },
    ids: { type: 'array', items: { type: 'integer' } },
    flags: { type: 'array', items: { type: 'boolean' } },
    sizes: { type: 'array', items: { enum: ['s', 'm', 'l'] } },
    nested: { type: 'object', properties: { a: { type: 'string' } } },
    records: { type: 'array', items: { type: 'object' } },
    either: { anyOf: [{ type: 'string' }, { type: 'null' }] },
    union: { type: ['string', 'null'] },
    anything: {},
  },
  required: ['name', 'count'],
  additionalProperties: false,
};

describe('buildForm', () => {
  it('maps every property type to its input kind', () => {
    const m = model(kitchenSink);
    const kinds = Object.fromEntries(m.fields.map((f) => [f.name, f.kind]));
    expect(kinds).toEqual({
      name: 'text',
      text: 'textarea',
      count: 'integer',
      ratio: 'number',
      loud: 'boolean',
      color: 'enum',
      level: 'enum',
      tags: 'list',
      scores: 'list',
      ids: 'list',
      flags: 'list',
      sizes: 'list',
      nested: 'json',
      records: 'json',
      either: 'json',
      union: 'json',
      anything: 'json',
    });
    const f = Object.fromEntries(m.fields.map((x) => [x.name, x]));
    expect(f.tags.itemKind).toBe('string');
    expect(f.scores.itemKind).toBe('number');
    expect(f.ids.itemKind).toBe('integer');
    expect(f.flags.itemKind).toBe('boolean');
    expect(f.sizes.itemKind).toBe('enum');
    expect(f.sizes.choices).toEqual(['s', 'm', 'l']);
    expect(f.count).toMatchObject({ required: true, minimum: 1, maximum: 10 });
    expect(f.name).toMatchObject({ required: true, description: 'Who', minLength: 1, maxLength: 40 });
    expect(f.ratio.required).toBe(false);
    expect(m.title).toBe('sink');
  });

  it('keeps the schema property order', () => {
    expect(model(kitchenSink).fields.map((f) => f.name).slice(0, 3)).toEqual(['name', 'text', 'count']);
  });

  it('uses a textarea only for long strings', () => {
    const m = model({ type: 'object', properties: { a: { type: 'string', maxLength: TEXTAREA_OVER }, b: { type: 'string', maxLength: TEXTAREA_OVER + 1 }, c: { type: 'string' } } });
    expect(m.fields.map((f) => f.kind)).toEqual(['text', 'textarea', 'text']);
  });

  it('treats const as a one-choice enum', () => {
    const m = model({ type: 'object', properties: { v: { const: 2 } }, required: ['v'] });
    expect(m.fields[0]).toMatchObject({ kind: 'enum', choices: [2] });
    expect(initialState(m)).toEqual({ v: '0' });
    expect(encode(m, initialState(m)).value).toEqual({ v: 2 });
  });

  it('refuses schemas that are not plain objects with properties', () => {
    expect(buildForm({ type: 'array', items: { type: 'string' } }).ok).toBe(false);
    expect(buildForm({ type: 'object' }).ok).toBe(false);
    expect(buildForm({ type: 'object', properties: {} }).ok).toBe(false);
    expect(buildForm({ anyOf: [{ type: 'object' }] }).ok).toBe(false);
    expect(buildForm(null).ok).toBe(false);
    expect(buildForm('nope').ok).toBe(false);
    const r = buildForm({ type: 'string' });
    expect(r.ok ? '' : r.reason).toMatch(/raw JSON/);
  });

  it('accepts an object schema without an explicit type', () => {
    expect(buildForm({ properties: { a: { type: 'string' } } }).ok).toBe(true);
  });

  it('falls back to JSON for array items it cannot show one per line', () => {
    const m = model({
      type: 'object',
      properties: {
        objs: { type: 'array', items: { type: 'object' } },
        mixed: { type: 'array', items: { enum: ['a', 1, 'x\ny'] } },
        none: { type: 'array' },
        nested: { type: 'array', items: { type: 'array', items: { type: 'string' } } },
      },
    });
    expect(m.fields.map((f) => f.kind)).toEqual(['json', 'json', 'json', 'json']);
  });
});

describe('initialState and defaults', () => {
  const schema = {
    type: 'object',
    properties: {
      s: { type: 'string', default: 'hello' },
      n: { type: 'number', default: 0.5 },
      i: { type: 'integer', default: 3 },
      b: { type: 'boolean', default: true },
      e: { enum: ['x', 'y'], default: 'y' },
      l: { type: 'array', items: { type: 'string' }, default: ['a', 'b'] },
      j: { type: 'object', default: { k: 1 } },
      bad: { type: 'integer', default: 'not a number' },
      plain: { type: 'string' },
      reqBool: { type: 'boolean' },
      optBool: { type: 'boolean' },
    },
    required: ['reqBool'],
  };

  it('pre-fills defaults and leaves other fields empty', () => {
    const m = model(schema);
    const st = initialState(m);
    expect(st).toEqual({
      s: 'hello',
      n: '0.5',
      i: '3',
      b: true,
      e: '1',
      l: 'a\nb',
      j: JSON.stringify({ k: 1 }, null, 2),
      bad: '',
      plain: '',
      reqBool: false,
      optBool: null,
    });
  });

  it('sends the defaults, so the invocation is explicit', () => {
    const m = model(schema);
    expect(encode(m, initialState(m))).toEqual({
      value: { s: 'hello', n: 0.5, i: 3, b: true, e: 'y', l: ['a', 'b'], j: { k: 1 }, reqBool: false },
      errors: {},
      warnings: {},
    });
  });

  it('ignores a default the field cannot show', () => {
    const f = model(schema).fields.find((x) => x.name === 'bad')!;
    expect(f.hasDefault).toBe(false);
  });
});

describe('encode', () => {
  const m = model(kitchenSink);

  it('leaves empty optional fields out', () => {
    const st = initialState(m);
    st.name = 'x';
    st.count = '2';
    expect(encode(m, st)).toEqual({ value: { name: 'x', count: 2 }, errors: {}, warnings: {} });
  });

  it('reports missing required fields', () => {
    const enc = encode(m, initialState(m));
    // A required string is sent as "" (a valid string; the schema's
    // minLength makes it a warning); a required number cannot be empty.
    expect(enc.errors).toEqual({ count: 'Required' });
    expect(enc.value).toEqual({ name: '' });
    expect(enc.warnings.name).toBe('Required');
  });

  it('parses numbers and integers strictly', () => {
    const st = { ...initialState(m), name: 'a' };
    expect(encode(m, { ...st, count: '2.5' }).errors.count).toBe('Enter a whole number');
    expect(encode(m, { ...st, count: 'abc' }).errors.count).toBe('Enter a whole number');
    expect(encode(m, { ...st, count: ' 7 ' }).value.count).toBe(7);
    expect(encode(m, { ...st, count: '1e1' }).value.count).toBe(10);
    expect(encode(m, { ...st, count: '3', ratio: '.25' }).value.ratio).toBe(0.25);
    expect(encode(m, { ...st, count: '3', ratio: '-0.5e-1' }).value.ratio).toBe(-0.05);
    expect(encode(m, { ...st, count: '3', ratio: '0x10' }).errors.ratio).toBe('Enter a number');
    expect(encode(m, { ...st, count: '3', ratio: 'Infinity' }).errors.ratio).toBe('Enter a number');
  });

  it('warns about bounds but still sends the value', () => {
    const st = { ...initialState(m), name: 'a', count: '11', ratio: '-1' };
    const enc = encode(m, st);
    expect(enc.value.count).toBe(11);
    expect(enc.warnings).toMatchObject({ count: 'At most 10', ratio: 'At least 0' });
    expect(enc.errors).toEqual({});
  });

  it('counts string length in code points', () => {
    const short = model({ type: 'object', properties: { s: { type: 'string', maxLength: 2 } } });
    expect(encode(short, { s: '😀😀' }).warnings).toEqual({});
    expect(encode(short, { s: '😀😀😀' }).warnings.s).toBe('At most 2 characters');
  });

  it('encodes booleans, leaving unset optional ones out', () => {
    const base = { ...initialState(m), name: 'a', count: '1' };
    expect(encode(m, { ...base, loud: true }).value.loud).toBe(true);
    expect(encode(m, { ...base, loud: false }).value.loud).toBe(false);
    expect('loud' in encode(m, { ...base, loud: null }).value).toBe(false);
  });

  it('encodes enums by choice index, keeping the choice type', () => {
    const base = { ...initialState(m), name: 'a', count: '1' };
    expect(encode(m, { ...base, color: '2' }).value.color).toBe('blue');
    expect(encode(m, { ...base, level: '0' }).value.level).toBe(1);
    expect('color' in encode(m, { ...base, color: '' }).value).toBe(false);
    const req = model({ type: 'object', properties: { c: { enum: ['a', 'b'] } }, required: ['c'] });
    expect(encode(req, initialState(req)).errors).toEqual({ c: 'Choose one' });
  });

  it('encodes lists one item per line', () => {
    const base = { ...initialState(m), name: 'a', count: '1' };
    const enc = encode(m, { ...base, tags: 'alpha\n\nbeta gamma\n', scores: '1.5\n-2', ids: '3\n4', flags: 'true\nfalse', sizes: 's\nl' });
    expect(enc.value).toMatchObject({ tags: ['alpha', 'beta gamma'], scores: [1.5, -2], ids: [3, 4], flags: [true, false], sizes: ['s', 'l'] });
    expect(enc.errors).toEqual({});
    expect(encode(m, { ...base, ids: '1\n2.5' }).errors.ids).toBe('Line 2: Enter a whole number');
    expect(encode(m, { ...base, flags: 'yes' }).errors.flags).toBe('Line 1: write true or false');
    expect(encode(m, { ...base, sizes: 'xl' }).errors.sizes).toMatch(/not one of the choices/);
    expect(encode(m, { ...base, tags: 'a\nb\nc\nd\ne\nf' }).warnings.tags).toBe('At most 5 items');
    const req = model({ type: 'object', properties: { l: { type: 'array', items: { type: 'string' } } }, required: ['l'] });
    expect(encode(req, { l: '' }).value).toEqual({ l: [] });
  });

  it('parses JSON fields and reports bad JSON', () => {
    const base = { ...initialState(m), name: 'a', count: '1' };
    expect(encode(m, { ...base, nested: '{"a": "b"}', either: 'null' }).value).toMatchObject({ nested: { a: 'b' }, either: null });
    expect(encode(m, { ...base, nested: '{a:' }).errors.nested).toMatch(/^Not valid JSON/);
    const req = model({ type: 'object', properties: { j: { type: 'object' } }, required: ['j'] });
    expect(encode(req, { j: '  ' }).errors).toEqual({ j: 'Required' });
  });

  it('produces pretty JSON text', () => {
    expect(toText({ a: 1, b: ['x'] })).toBe('{\n  "a": 1,\n  "b": [\n    "x"\n  ]\n}');
  });
});

describe('raw editor sync', () => {
  const m = model(kitchenSink);

  it('round-trips every representable value exactly', () => {
    const values = [
      { name: 'n', count: 1 },
      { name: '', count: 10 },
      {
        name: 'Ada',
        text: 'line one\nline two\n\n  indented',
        count: 3,
        ratio: 0.125,
        loud: false,
        color: 'green',
        level: 3,
        tags: ['a b', 'c'],
        scores: [1e-7, -3, 2.5],
        ids: [0, -1, 123456789],
        flags: [false, true],
        sizes: ['m'],
        nested: { a: 'x', deep: [1, { z: null }] },
        records: [{ id: 1 }],
        either: null,
        union: 'u',
        anything: [true, 'x', 1.5],
      },
    ];
    for (const v of values) expect(roundTrip(m, v)).toEqual(v);
  });

  it('round-trips form → raw → form', () => {
    const st = { ...initialState(m), name: 'Zoë', count: '4', ratio: '0.5', loud: true, color: '0', tags: 'x\ny', nested: '{\n  "a": "1"\n}' };
    const text = toText(encode(m, st).value);
    const back = parseRaw(m, text);
    expect(back.ok).toBe(true);
    if (back.ok) expect(back.state).toEqual({ ...st });
  });

  it('marks absent fields empty', () => {
    const r = parseRaw(m, '{"name":"a","count":1}');
    expect(r.ok && r.state.ratio).toBe('');
    expect(r.ok && r.state.loud).toBe(null);
  });

  it('reports syntax errors separately from values the form cannot show', () => {
    const syn = parseRaw(m, '{"name": ');
    expect(syn).toMatchObject({ ok: false, syntax: true });
    const cases: [unknown, RegExp][] = [
      [[1, 2], /not a JSON object/],
      [{ name: 'a', count: 1, extra: 1 }, /no field for "extra"/],
      [{ name: 1, count: 1 }, /name: expected text/],
      [{ name: 'a', count: 1.5 }, /count: expected a whole number/],
      [{ name: 'a', count: 1, ratio: '1' }, /ratio: expected a number/],
      [{ name: 'a', count: 1, loud: 'yes' }, /loud: expected true or false/],
      [{ name: 'a', count: 1, color: 'pink' }, /color: the value is not one of the choices/],
      [{ name: 'a', count: 1, tags: ['multi\nline'] }, /tags: a list item/],
      [{ name: 'a', count: 1, tags: [''] }, /tags: a list item/],
      [{ name: 'a', count: 1, tags: [' padded'] }, /tags: a list item/],
      [{ name: 'a', count: 1, tags: [] }, /empty optional list/],
      [{ name: 'a', count: 1, ids: [1.5] }, /ids: a list item/],
      [{ name: 'a', count: 1, tags: 'x' }, /tags: expected a list/],
      [{ name: 'a\nb', count: 1 }, /line breaks/],
    ];
    for (const [v, re] of cases) {
      const r = fromValue(m, v);
      expect(r.ok, JSON.stringify(v)).toBe(false);
      if (!r.ok) {
        expect(r.syntax).toBe(false);
        expect(r.reason).toMatch(re);
      }
    }
  });

  it('refuses an empty optional string (it would read as "leave out")', () => {
    const opt = model({ type: 'object', properties: { s: { type: 'string' } } });
    expect(fromValue(opt, { s: '' }).ok).toBe(false);
    const req = model({ type: 'object', properties: { s: { type: 'string' } }, required: ['s'] });
    expect(roundTrip(req, { s: '' })).toEqual({ s: '' });
  });

  it('keeps a value that came from JSON for an optional boolean', () => {
    const r = parseRaw(m, '{"name":"a","count":1,"loud":false}');
    expect(r.ok && r.state.loud).toBe(false);
    if (r.ok) expect(encode(m, r.state).value.loud).toBe(false);
  });

  it('works on the bundled text-metrics schema', () => {
    const tm = model({
      type: 'object',
      properties: {
        text: { type: 'string', maxLength: 200000, description: 'The text to measure.' },
        words_per_minute: { type: 'integer', minimum: 50, maximum: 1000 },
      },
      required: ['text'],
      additionalProperties: false,
    });
    expect(tm.fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['text', 'textarea', true],
      ['words_per_minute', 'integer', false],
    ]);
    expect(toText(encode(tm, initialState(tm)).value)).toBe('{\n  "text": ""\n}');
    expect(roundTrip(tm, { text: 'Hello world.', words_per_minute: 250 })).toEqual({ text: 'Hello world.', words_per_minute: 250 });
  });
});

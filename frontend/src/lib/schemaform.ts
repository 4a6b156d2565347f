// Schema → form → JSON, as pure functions (no DOM): the "Run…" panel builds
// its inputs from a FormModel, keeps their values in a FormState, and turns
// them into the JSON text sent to StartRun. The raw JSON editor goes the
// other way (parseRaw) so both tabs stay in sync.
//
// Rules (the tests in schemaform.test.ts pin them down):
// - The root schema must be an object with `properties`; otherwise there is
//   no form and the raw editor is the only editor.
// - Property kinds: `enum`/`const` → select; string → text input (textarea
//   when maxLength > 200 or no short bound is useful, see TEXTAREA_OVER);
//   number / integer → number input; boolean → checkbox; array of scalars
//   (or of an enum) → textarea with one item per line; anything else
//   (nested objects, arrays of objects, anyOf/oneOf, type unions, no type)
//   → a JSON textarea for that field.
// - Empty means "leave the field out" for optional fields. Required fields
//   are always sent when the type has a natural empty value (a required
//   string is sent as "", a required list as [], a required boolean as its
//   checkbox state); a required number, choice or JSON field left empty is
//   an error.
// - Defaults from the schema pre-fill the form (and so are sent, which makes
//   the exact invocation visible in the consent dialog).
// - A JSON value the form cannot show without losing information (unknown
//   keys, wrong types, an empty optional string, multi-line list items…)
//   makes parseRaw fail with a reason; the raw editor stays authoritative.

import type { JSONValue } from '../api/types';

export type FieldKind = 'text' | 'textarea' | 'number' | 'integer' | 'boolean' | 'enum' | 'list' | 'json';
export type ItemKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum';

export interface FieldSpec {
  name: string;
  kind: FieldKind;
  required: boolean;
  title?: string;
  description?: string;
  /** Choices of an `enum` field, or of `list` items when itemKind is enum. */
  choices?: JSONValue[];
  itemKind?: ItemKind;
  hasDefault: boolean;
  default?: JSONValue;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

export interface FormModel {
  title?: string;
  fields: FieldSpec[];
}

/** A field's editor value: text for every kind except boolean, where
 * null means "not set". Enum values are the index of the choice ("" = none). */
export type FieldValue = string | boolean | null;
export type FormState = Record<string, FieldValue>;

export type BuildResult = { ok: true; model: FormModel } | { ok: false; reason: string };

/** Strings with a maxLength above this get a textarea. */
export const TEXTAREA_OVER = 200;

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The single JSON type of a schema, or undefined (none, or a union). */
function singleType(s: Record<string, unknown>): string | undefined {
  const t = s.type;
  if (typeof t === 'string') return t;
  if (Array.isArray(t) && t.length === 1 && typeof t[0] === 'string') return t[0];
  return undefined;
}

const COMPOSITE = ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'if', 'then', 'else'];

function isComposite(s: Record<string, unknown>): boolean {
  return COMPOSITE.some((k) => k in s);
}

function choicesOf(s: Record<string, unknown>): JSONValue[] | undefined {
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum as JSONValue[];
  if ('const' in s) return [s.const as JSONValue];
  return undefined;
}

function itemKindOf(items: unknown): { kind: ItemKind; choices?: JSONValue[] } | undefined {
  if (!isObj(items) || isComposite(items)) return undefined;
  const choices = choicesOf(items);
  if (choices) {
    // Choices must be scalars that print distinctly, one per line.
    const printed = choices.map((c) => (typeof c === 'string' ? c : JSON.stringify(c)));
    if (choices.every((c) => c !== null && typeof c !== 'object') && new Set(printed).size === printed.length && printed.every((p) => p !== '' && !p.includes('\n'))) {
      return { kind: 'enum', choices };
    }
    return undefined;
  }
  const t = singleType(items);
  if (t === 'string' || t === 'number' || t === 'integer' || t === 'boolean') return { kind: t };
  return undefined;
}

function fieldFor(name: string, schema: unknown, required: boolean): FieldSpec {
  const s = isObj(schema) ? schema : {};
  const f: FieldSpec = { name, kind: 'json', required, hasDefault: false };
  const title = str(s.title);
  const description = str(s.description);
  if (title) f.title = title;
  if (description) f.description = description;
  const choices = choicesOf(s);
  const t = singleType(s);
  if (!isComposite(s)) {
    if (choices) {
      f.kind = 'enum';
      f.choices = choices;
    } else if (t === 'string') {
      const maxLength = num(s.maxLength);
      f.kind = maxLength !== undefined && maxLength > TEXTAREA_OVER ? 'textarea' : 'text';
      f.minLength = num(s.minLength);
      f.maxLength = maxLength;
    } else if (t === 'number' || t === 'integer') {
      f.kind = t;
      f.minimum = num(s.minimum);
      f.maximum = num(s.maximum);
    } else if (t === 'boolean') {
      f.kind = 'boolean';
    } else if (t === 'array') {
      const item = itemKindOf(s.items);
      if (item) {
        f.kind = 'list';
        f.itemKind = item.kind;
        if (item.choices) f.choices = item.choices;
        f.minItems = num(s.minItems);
        f.maxItems = num(s.maxItems);
      }
    }
  }
  for (const k of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems'] as const) {
    if (f[k] === undefined) delete f[k];
  }
  if ('default' in s) {
    const st = valueToField(f, s.default);
    if (st.ok) {
      f.hasDefault = true;
      f.default = s.default as JSONValue;
    }
  }
  return f;
}

/** Builds the form model of an input schema. */
export function buildForm(schema: unknown): BuildResult {
  if (!isObj(schema)) return { ok: false, reason: 'The input schema is not a JSON object.' };
  const t = singleType(schema);
  if ((t !== undefined && t !== 'object') || isComposite(schema)) {
    return { ok: false, reason: 'The input is not a plain object, so it can only be written as raw JSON.' };
  }
  if (!isObj(schema.properties) || Object.keys(schema.properties).length === 0) {
    return { ok: false, reason: 'The input schema lists no properties, so it can only be written as raw JSON.' };
  }
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const fields = Object.entries(schema.properties).map(([name, s]) => fieldFor(name, s, required.has(name)));
  const model: FormModel = { fields };
  const title = str(schema.title);
  if (title) model.title = title;
  return { ok: true, model };
}

/** The form's starting values: defaults, else empty (a required boolean
 * starts unchecked, a required single-choice enum starts on its choice). */
export function initialState(model: FormModel): FormState {
  const st: FormState = {};
  for (const f of model.fields) {
    if (f.hasDefault) {
      const r = valueToField(f, f.default);
      if (r.ok) {
        st[f.name] = r.value;
        continue;
      }
    }
    if (f.kind === 'boolean') st[f.name] = f.required ? false : null;
    else if (f.kind === 'enum' && f.required && f.choices?.length === 1) st[f.name] = '0';
    else st[f.name] = '';
  }
  return st;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

function printItem(v: JSONValue): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

type FieldResult = { ok: true; value: FieldValue } | { ok: false; reason: string };

/** One JSON value → the field's editor value, if the field can show it. */
export function valueToField(f: FieldSpec, v: unknown): FieldResult {
  const no = (reason: string): FieldResult => ({ ok: false, reason: `${f.name}: ${reason}` });
  switch (f.kind) {
    case 'text':
    case 'textarea':
      if (typeof v !== 'string') return no('expected text');
      if (v === '' && !f.required) return no('an empty optional text cannot be told apart from "leave out" in the form');
      if (f.kind === 'text' && /[\r\n]/.test(v)) return no('the text has line breaks');
      return { ok: true, value: v };
    case 'number':
    case 'integer':
      if (typeof v !== 'number' || !Number.isFinite(v)) return no('expected a number');
      if (f.kind === 'integer' && !Number.isInteger(v)) return no('expected a whole number');
      return { ok: true, value: String(v) };
    case 'boolean':
      if (typeof v !== 'boolean') return no('expected true or false');
      return { ok: true, value: v };
    case 'enum': {
      const i = (f.choices ?? []).findIndex((c) => deepEqual(c, v));
      if (i < 0) return no('the value is not one of the choices');
      return { ok: true, value: String(i) };
    }
    case 'list': {
      if (!Array.isArray(v)) return no('expected a list');
      if (v.length === 0 && !f.required) return no('an empty optional list cannot be told apart from "leave out" in the form');
      const lines: string[] = [];
      for (const item of v) {
        const r = itemToLine(f, item);
        if (r === undefined) return no('a list item cannot be shown one per line');
        lines.push(r);
      }
      return { ok: true, value: lines.join('\n') };
    }
    case 'json':
      if (v === undefined) return no('no value');
      return { ok: true, value: JSON.stringify(v, null, 2) };
  }
}

function itemToLine(f: FieldSpec, item: unknown): string | undefined {
  switch (f.itemKind) {
    case 'string':
      return typeof item === 'string' && item.trim() !== '' && item.trim() === item && !/[\r\n]/.test(item) ? item : undefined;
    case 'number':
      return typeof item === 'number' && Number.isFinite(item) ? String(item) : undefined;
    case 'integer':
      return typeof item === 'number' && Number.isInteger(item) ? String(item) : undefined;
    case 'boolean':
      return typeof item === 'boolean' ? String(item) : undefined;
    case 'enum':
      return (f.choices ?? []).some((c) => deepEqual(c, item)) ? printItem(item as JSONValue) : undefined;
    default:
      return undefined;
  }
}

export interface Encoded {
  /** The invocation object (fields with errors are left out). */
  value: Record<string, JSONValue>;
  /** Blocking problems, by field name: the form cannot produce this field. */
  errors: Record<string, string>;
  /** Schema constraints the value breaks (the server checks them too). */
  warnings: Record<string, string>;
}

function parseNumber(text: string, integer: boolean): number | string {
  const t = text.trim();
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return integer ? 'Enter a whole number' : 'Enter a number';
  const n = Number(t);
  if (!Number.isFinite(n)) return 'The number is too large';
  if (integer && !Number.isInteger(n)) return 'Enter a whole number';
  return n;
}

function rangeWarning(f: FieldSpec, n: number): string | undefined {
  if (f.minimum !== undefined && n < f.minimum) return `At least ${f.minimum}`;
  if (f.maximum !== undefined && n > f.maximum) return `At most ${f.maximum}`;
  return undefined;
}

/** Form values → the invocation object, with per-field errors. */
export function encode(model: FormModel, state: FormState): Encoded {
  const out: Encoded = { value: {}, errors: {}, warnings: {} };
  for (const f of model.fields) {
    const v = state[f.name];
    const text = typeof v === 'string' ? v : '';
    switch (f.kind) {
      case 'text':
      case 'textarea': {
        if (text === '' && !f.required) break;
        out.value[f.name] = text;
        const len = [...text].length;
        if (f.minLength !== undefined && len < f.minLength) out.warnings[f.name] = text === '' ? 'Required' : `At least ${f.minLength} characters`;
        else if (f.maxLength !== undefined && len > f.maxLength) out.warnings[f.name] = `At most ${f.maxLength} characters`;
        break;
      }
      case 'number':
      case 'integer': {
        if (text.trim() === '') {
          if (f.required) out.errors[f.name] = 'Required';
          break;
        }
        const n = parseNumber(text, f.kind === 'integer');
        if (typeof n === 'string') {
          out.errors[f.name] = n;
          break;
        }
        out.value[f.name] = n;
        const w = rangeWarning(f, n);
        if (w) out.warnings[f.name] = w;
        break;
      }
      case 'boolean':
        if (typeof v === 'boolean') out.value[f.name] = v;
        else if (f.required) out.errors[f.name] = 'Required';
        break;
      case 'enum': {
        if (text === '') {
          if (f.required) out.errors[f.name] = 'Choose one';
          break;
        }
        const c = f.choices?.[Number(text)];
        if (c === undefined) out.errors[f.name] = 'Choose one';
        else out.value[f.name] = c;
        break;
      }
      case 'list': {
        const lines = text.split('\n').filter((l) => l.trim() !== '');
        if (lines.length === 0 && !f.required) break;
        const items: JSONValue[] = [];
        let bad: string | undefined;
        lines.forEach((line, i) => {
          if (bad) return;
          const r = lineToItem(f, line);
          if (typeof r === 'object' && r !== null && 'error' in r) bad = `Line ${i + 1}: ${r.error}`;
          else items.push(r as JSONValue);
        });
        if (bad) {
          out.errors[f.name] = bad;
          break;
        }
        out.value[f.name] = items;
        if (f.minItems !== undefined && items.length < f.minItems) out.warnings[f.name] = `At least ${f.minItems} item${f.minItems === 1 ? '' : 's'}`;
        else if (f.maxItems !== undefined && items.length > f.maxItems) out.warnings[f.name] = `At most ${f.maxItems} items`;
        break;
      }
      case 'json': {
        if (text.trim() === '') {
          if (f.required) out.errors[f.name] = 'Required';
          break;
        }
        try {
          out.value[f.name] = JSON.parse(text) as JSONValue;
        } catch (e) {
          out.errors[f.name] = 'Not valid JSON: ' + (e instanceof Error ? e.message : String(e));
        }
        break;
      }
    }
  }
  return out;
}

function lineToItem(f: FieldSpec, line: string): JSONValue | { error: string } {
  const t = line.trim();
  switch (f.itemKind) {
    case 'string':
      return t;
    case 'number':
    case 'integer': {
      const n = parseNumber(t, f.itemKind === 'integer');
      return typeof n === 'string' ? { error: n } : n;
    }
    case 'boolean':
      if (t === 'true') return true;
      if (t === 'false') return false;
      return { error: 'write true or false' };
    case 'enum': {
      const c = (f.choices ?? []).find((x) => printItem(x) === t);
      return c === undefined ? { error: `"${t}" is not one of the choices` } : c;
    }
    default:
      return { error: 'unsupported item' };
  }
}

/** The JSON text the form produces (what StartRun sends in form mode). */
export function toText(value: Record<string, JSONValue>): string {
  return JSON.stringify(value, null, 2);
}

export type RawResult =
  | { ok: true; state: FormState; value: Record<string, JSONValue> }
  | { ok: false; syntax: boolean; reason: string };

/** Raw JSON text → form values, when the form can show it exactly. */
export function parseRaw(model: FormModel, text: string): RawResult {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { ok: false, syntax: true, reason: 'The raw JSON is not valid: ' + (e instanceof Error ? e.message : String(e)) };
  }
  return fromValue(model, v);
}

/** A JSON value → form values, when the form can show it exactly. */
export function fromValue(model: FormModel, v: unknown): RawResult {
  if (!isObj(v)) return { ok: false, syntax: false, reason: 'The input is not a JSON object.' };
  const known = new Set(model.fields.map((f) => f.name));
  const extra = Object.keys(v).filter((k) => !known.has(k));
  if (extra.length) return { ok: false, syntax: false, reason: `The form has no field for ${extra.map((k) => JSON.stringify(k)).join(', ')}.` };
  const state: FormState = {};
  for (const f of model.fields) {
    if (!(f.name in v)) {
      state[f.name] = f.kind === 'boolean' ? null : '';
      continue;
    }
    const r = valueToField(f, v[f.name]);
    if (!r.ok) return { ok: false, syntax: false, reason: r.reason };
    state[f.name] = r.value;
  }
  return { ok: true, state, value: v as Record<string, JSONValue> };
}

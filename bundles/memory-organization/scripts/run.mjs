// memory-organization: read-only planner for an agent's memory store.
//
// Protocol (Gatehouse checked execution):
//   stdin  one JSON object {facts, now?, near_duplicate_threshold?}, then EOF
//   stdout exactly one JSON value: {"ok":true,"plan":{...}} or
//          {"ok":false,"errors":[{path,message}]}   (exit 0 for both)
//   stdin that is not UTF-8 JSON: nothing on stdout, a message on stderr, exit 2
//
// The planner never changes anything; it only proposes.

import process from 'node:process';
import { Buffer } from 'node:buffer';
import { buildPlan, fitPlan } from './lib/plan.mjs';
import { validateInput } from './lib/validate.mjs';

const MAX_OUTPUT_BYTES = 65536; // execution.json maxOutputBytes
const OUTPUT_BUDGET = MAX_OUTPUT_BYTES - 1024; // room for the newline and slack

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function fail(message) {
  process.stderr.write(`memory-organization: ${message}\n`);
  process.exitCode = 2;
}

async function main() {
  const bytes = await readStdin();
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return fail('stdin is not valid UTF-8');
  }
  let input;
  try {
    input = JSON.parse(text);
  } catch {
    return fail('stdin is not valid JSON');
  }

  const checked = validateInput(input, new Date().toISOString());
  let result;
  if (!checked.ok) {
    result = { ok: false, errors: checked.errors };
  } else {
    const plan = buildPlan(checked.facts, checked.nowNs, checked.threshold);
    result = { ok: true, plan: fitPlan(plan, OUTPUT_BUDGET) };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error) => {
  process.stderr.write(`memory-organization: internal error: ${String(error?.message ?? error).slice(0, 200)}\n`);
  process.exitCode = 1;
});

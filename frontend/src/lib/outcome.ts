// The Runs view's outcome column: who or what decided an attempt, in
// words, read from the rule the backend recorded (authorized_by) and the
// refusal code of its envelope (pure, unit-tested). It only names the
// backend's recorded decision; it never decides anything itself.

import type { Tone } from './labels';

export interface Outcome {
  label: string;
  tone: Tone;
  /** One sentence for the tooltip and the run detail. */
  text: string;
}

interface Recorded {
  authorized_by: string;
  status: string;
  envelope?: { errors?: { code: string }[] } | null;
}

const SHORT = 10;

function short(id: string): string {
  return id.length > SHORT ? `${id.slice(0, SHORT)}…` : id;
}

/** The refusal reasons a policy or agent rule records, in words. */
const REFUSED: Record<string, string> = {
  'policy: safe mode': 'safe mode',
  'policy: blocked': 'blocked',
  policy: 'policy unreadable',
  'agent: can_execute_skills': 'capability missing',
  inspection: 'not runnable',
  'input schema': 'invalid input',
  'consent: binding_changed': 'changed before launch',
  'consent: policy_refused': 'policy changed before launch',
};

const AGENT_CODES: Record<string, string> = {
  agent_disabled: 'agent disabled',
  capability_missing: 'agent not registered',
};

/** The outcome of one recorded attempt. */
export function runOutcome(r: Recorded): Outcome {
  const rule = r.authorized_by ?? '';
  const code = r.envelope?.errors?.[0]?.code ?? '';
  const refused = r.status === 'refused';
  if (rule.startsWith('unknown')) return { label: 'Unknown (interrupted)', tone: 'warn', text: 'Gatehouse stopped before it recorded who authorized this attempt.' };
  if (refused && (code === 'denied' || rule === 'person')) return { label: 'Denied', tone: 'neutral', text: 'You denied this request. Nothing ran.' };
  if (refused && (code === 'expired' || rule === 'consent: expired'))
    return { label: 'Expired', tone: 'warn', text: 'Nobody decided within the 5-minute window, or the approval expired before launch. Nothing ran.' };
  if (refused && (code === 'superseded' || rule === 'consent: stale'))
    return { label: 'Replaced', tone: 'neutral', text: 'A newer request of the same run for this skill replaced this one before anyone decided. Nothing ran.' };
  if (refused && (code === 'cancelled' || rule === 'consent: cancelled')) {
    const by = rule === 'agent' ? 'The agent gave up waiting' : 'The request was withdrawn';
    return { label: 'Cancelled', tone: 'neutral', text: `${by} before anyone decided. Nothing ran.` };
  }
  const person = /^person \(consent ([^)]+)\)$/.exec(rule);
  if (person) return { label: 'Approved by you', tone: 'ok', text: `You approved this exact invocation once (consent ${person[1]}).` };
  const trusted = /^trusted scope (.+)$/.exec(rule);
  if (trusted) return { label: `Trusted (receipt ${short(trusted[1]!)})`, tone: 'info', text: `A trusted scope you approved allowed it without asking (receipt ${trusted[1]}).` };
  if (rule === 'workflow plan') return { label: 'Plan step', tone: 'info', text: 'A step of a workflow plan you approved.' };
  if (rule in REFUSED) return { label: `Refused (${REFUSED[rule]})`, tone: 'danger', text: `Refused by Gatehouse: ${REFUSED[rule]}. Nothing ran.` };
  if (rule === 'agent' && code in AGENT_CODES) return { label: `Refused (${AGENT_CODES[code]})`, tone: 'danger', text: `Refused by Gatehouse: ${AGENT_CODES[code]}. Nothing ran.` };
  if (rule === 'consent' && code === 'permission_required')
    return { label: 'Refused (nobody to ask)', tone: 'danger', text: 'This run needed your approval and no consent dialog could be shown. Nothing ran.' };
  const launch = /^(?:launch check|consent): (.+)$/.exec(rule);
  if (launch) return { label: `Refused at launch (${launch[1]!.replace(/_/g, ' ')})`, tone: 'danger', text: `The check just before launch refused it (${launch[1]}). Nothing ran.` };
  if (refused) return { label: `Refused${code ? ` (${code.replace(/_/g, ' ')})` : ''}`, tone: 'danger', text: `Refused by ${rule || 'Gatehouse'}.` };
  return { label: rule || '—', tone: 'neutral', text: rule ? `Recorded rule: ${rule}.` : 'No rule was recorded.' };
}

// The "New capture" editor's pure logic: scenario templates filled from
// the operator policy in effect (a starting point only: the backend parses
// the scenario and checks the policy, and its answer is what is shown),
// and the progress line of a running capture.

import type { CaptureEvent, CaptureSettings } from '../api/types';
import { formatMs } from './format';

export interface ScenarioTemplate {
  id: string;
  label: string;
  text: string;
}

/** A directory the policy lets a capture work in (its first working
 * root), or a placeholder the backend will refuse with its reason. */
function workdir(p: CaptureSettings | null): string {
  return p?.workingRoots?.[0] ?? '/path/inside/a/working/root';
}

/** A shell the policy lets run, preferring /bin/sh. */
function shell(p: CaptureSettings | null): string {
  const roots = p?.executableRoots ?? [];
  if (roots.length === 0 || roots.some((r) => r === '/bin' || r === '/')) return '/bin/sh';
  if (roots.some((r) => r === '/usr/bin' || r === '/usr')) return '/usr/bin/sh';
  return '/bin/sh';
}

function pretty(v: unknown): string {
  return JSON.stringify(v, null, 2) + '\n';
}

/** The editor's templates for the policy in effect (null: not known). */
export function scenarioTemplates(p: CaptureSettings | null): ScenarioTemplate[] {
  const base = {
    approved: true,
    executable: shell(p),
    working_directory: workdir(p),
    environment: p?.allowedEnv?.includes('PATH') ? { PATH: '/usr/bin:/bin' } : {},
    timeout_ms: 10000,
  };
  return [
    {
      id: 'print',
      label: 'Print and exit',
      text: pretty({ ...base, arguments: ['-c', "printf 'hello from \\033[1;32mGatehouse\\033[0m\\n'; for i in 1 2 3; do echo \"line $i\"; sleep 0.2; done"] }),
    },
    {
      id: 'input',
      label: 'Answer a prompt',
      text: pretty({
        ...base,
        arguments: ['-c', 'printf "name? "; read name; echo "hello, $name"'],
        events: [{ type: 'input', at_ms: 500, data: 'Ada\r' }],
      }),
    },
    {
      id: 'wait',
      label: 'Long-running (to try Cancel)',
      text: pretty({ ...base, arguments: ['-c', 'for i in $(seq 1 60); do echo "tick $i"; sleep 1; done'], timeout_ms: 120000 }),
    },
  ];
}

/** What the progress bar shows for a capture event: a fraction of the
 * time limit while running (null when indeterminate) and a label. */
export function captureProgress(e: CaptureEvent): { fraction: number | null; label: string } {
  switch (e.state) {
    case 'running': {
      const limit = Math.max(1, e.timeout_ms);
      return {
        fraction: Math.min(1, Math.max(0, e.elapsed_ms / limit)),
        label: `Running · ${formatMs(e.elapsed_ms)} · stops at ${formatMs(e.timeout_ms)} at the latest`,
      };
    }
    case 'saving':
      return { fraction: null, label: 'Recorded · sealing, saving and verifying the Evidence…' };
    case 'done':
      return { fraction: 1, label: 'Saved and verified' };
    case 'cancelled':
      return { fraction: null, label: 'Cancelled · its processes were ended; nothing was saved' };
    case 'failed':
      return { fraction: null, label: `Failed · ${e.error?.message ?? 'the capture did not complete'}` };
  }
}

// Pure texts of the Security → Script confinement section: the person's
// setting, what the kernel enforces for it right now and how attempts are
// owned, in plain words. Every verdict comes from the backend's GetSecurity
// (enforced / not_enforced, unavailable, confined, ownership); this only
// words it, and words a name it does not know as the name itself.

import type { ConfinementSettings, SecurityView } from '../api/types';
import type { StateInfo } from './labels';

/** Plain words for each name a launcher can list as enforced or not enforced. */
export const FEATURE_WORDS: Record<string, { label: string; on: string; off: string }> = {
  filesystem: {
    label: 'Files',
    on: 'writes only the workspace and its own temporary folder; reads only the skill, the Node runtime and system files (not your home folder, not Gatehouse data)',
    off: 'can read and change every file you can',
  },
  tcp: { label: 'TCP', on: 'cannot connect to or listen on any TCP port', off: 'can connect to and listen on TCP ports' },
  udp: { label: 'UDP', on: 'has no network of its own (a separate network namespace), so no UDP either', off: 'can send and receive UDP' },
  signals: { label: 'Signals', on: 'cannot signal processes outside its own run', off: 'can signal your other processes' },
  abstract_unix_sockets: { label: 'Abstract sockets', on: 'cannot reach abstract Unix sockets outside its own run', off: 'can reach abstract Unix sockets of your other programs' },
};

/** Plain words for each process-ownership mechanism. */
export const OWNERSHIP_WORDS: Record<string, string> = {
  pid_namespace: 'Each run gets its own PID namespace: when the run ends, the kernel ends every process in it.',
  cgroup: 'Each run gets its own control group that its processes cannot leave; Gatehouse ends every process in it.',
  subreaper: 'Gatehouse is the subreaper of each run: every process a script starts stays its descendant and is ended with the run.',
  'process-group': 'Gatehouse ends the process group of each run; a process that leaves the group is not tracked.',
};

/** One line of the enforcement list. */
export interface FeatureLine {
  name: string;
  label: string;
  text: string;
  enforced: boolean;
}

/** What the section shows, all derived from one GetSecurity answer. */
export interface ConfinementModel {
  /** The stored setting in words. */
  setting: string;
  /** The headline and its tone: confined, partly confined, off, or refused. */
  status: StateInfo;
  /** Enforced features first, then those not enforced, in the backend's order. */
  features: FeatureLine[];
  /** Why a launch would be refused now (confinement_unavailable), else null. */
  unavailable: string | null;
  ownership: { name: string; text: string; verifiable: boolean; reason: string | null };
}

function feature(name: string, enforced: boolean): FeatureLine {
  const w = FEATURE_WORDS[name];
  if (!w) return { name, label: name, text: enforced ? 'enforced' : 'not enforced', enforced };
  return { name, label: w.label, text: enforced ? w.on : w.off, enforced };
}

/** The setting in words, e.g. "Files: workspace only · Network: denied". */
export function settingWords(s: ConfinementSettings): string {
  const fs = s.filesystem === 'workspace' ? 'workspace only' : s.filesystem === 'off' ? 'off (full access)' : s.filesystem;
  const net = s.network === 'deny' ? 'denied' : s.network === 'allow' ? 'allowed' : s.network;
  return `Files: ${fs} · Network: ${net}`;
}

/** Builds the section's model from GetSecurity's answer. */
export function confinementModel(v: SecurityView): ConfinementModel {
  const rep = v.enforcement;
  const features = rep ? [...rep.enforced.map((n) => feature(n, true)), ...rep.not_enforced.map((n) => feature(n, false))] : [];
  const unavailable = rep ? null : (v.unavailable ?? 'the backend reported no enforcement and no reason');
  let status: ConfinementModel['status'];
  if (!rep) {
    status = {
      label: 'Runs refused',
      tone: 'danger',
      text: 'This machine cannot enforce the chosen confinement, so every script run is refused (confinement_unavailable) until it can, or until you turn confinement off.',
    };
  } else if (v.confined) {
    status = { label: 'Confined', tone: 'ok', text: 'Scripts are confined: they can write only the workspace and their own temporary folder, and have no network.' };
  } else if (rep.enforced.length === 0) {
    status = { label: 'Not confined', tone: 'danger', text: 'Scripts run with YOUR full permissions: they can read and change your files, use the network and start programs.' };
  } else {
    status = { label: 'Partly confined', tone: 'warn', text: 'Scripts are only partly confined; what is not enforced below, a script can do with your permissions.' };
  }
  return {
    setting: settingWords(v.confinement),
    status,
    features,
    unavailable,
    ownership: {
      name: v.ownership,
      text: OWNERSHIP_WORDS[v.ownership] ?? `Mechanism: ${v.ownership}.`,
      verifiable: !v.ownershipUnverifiable,
      reason: v.ownershipUnverifiable || null,
    },
  };
}

/** The warning for a draft that weakens the saved setting, or null when it
 * weakens nothing (every weakened part is named). */
export function weakeningWarning(saved: ConfinementSettings, draft: ConfinementSettings): string | null {
  const parts: string[] = [];
  if (draft.filesystem === 'off' && saved.filesystem !== 'off') parts.push('read and change every file you can (your home folder, SSH keys, the Gatehouse database and signing key)');
  if (draft.network === 'allow' && saved.network !== 'allow') parts.push('use the network (send your data anywhere, reach local services)');
  if (!parts.length) return null;
  return `With this change, every script an agent runs after you approve it can ${parts.join(', and ')}. Approvals stop being limited to one run's workspace. Trusted revisions approved under the stronger setting will ask again.`;
}

/** Whether the draft differs from the saved setting. */
export function settingChanged(saved: ConfinementSettings, draft: ConfinementSettings): boolean {
  return saved.filesystem !== draft.filesystem || saved.network !== draft.network;
}

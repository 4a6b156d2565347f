// Security settings: execution policy (mode, safe mode, trusted revision
// scopes), agents, script confinement, the Node runtime pin, skill roots, the
// process-capture operator policy and evidence signing, one module per
// section (security_*.ts). Each section saves on its own, all or nothing;
// the load / render / save / "changed elsewhere" scaffold they share is
// SettingsSection in settings_section.ts.

import { onEvent } from '../api/client';
import { h } from '../lib/dom';
import { agentsSection } from './security_agents';
import { captureSection } from './security_capture';
import { confinementSection } from './security_confinement';
import { policySection } from './security_policy';
import { takeTrustRequest } from '../lib/trust_request';
import { rootsSection } from './security_roots';
import { runtimeSection } from './security_runtime';
import { signingSection } from './security_signing';
import type { View } from './view';

export function securityView(): View {
  const el = h('div', { class: 'page security-view' });
  const sections = {
    policy: h('div', { id: 'policy' }),
    agents: h('div', { id: 'agents' }),
    confinement: h('div', { id: 'confinement' }),
    runtime: h('div', { id: 'runtime' }),
    roots: h('div', { id: 'roots' }),
    capture: h('div', { id: 'capture' }),
    signing: h('div', { id: 'signing' }),
  };
  const jump = h(
    'nav',
    { class: 'jump', 'aria-label': 'Security sections' },
    [
      ['policy', 'Execution policy'],
      ['agents', 'Agents'],
      ['confinement', 'Script confinement'],
      ['runtime', 'Node runtime'],
      ['roots', 'Skill roots'],
      ['capture', 'Process capture'],
      ['signing', 'Evidence signing'],
    ].map(([id, label]) =>
      h(
        'a',
        {
          href: `#/security/${id}`,
          class: 'jump-link',
        },
        label,
      ),
    ),
  );
  el.append(
    h('header', { class: 'page-head' }, h('div', null, h('h1', null, 'Security'), h('p', { class: 'muted small' }, 'What agents may run, who they are, and what Gatehouse trusts. Each section saves on its own, all or nothing.')), jump),
    sections.policy,
    sections.agents,
    sections.confinement,
    sections.runtime,
    sections.roots,
    sections.capture,
    sections.signing,
  );

  const policy = policySection(sections.policy);
  // Every section loads on its own; jump to an anchor once all have drawn
  // (earlier, the sections above would still grow and push it away).
  const agents = agentsSection(sections.agents, () => policy.agentsChanged());
  const confinement = confinementSection(sections.confinement);
  const runtime = runtimeSection(sections.runtime);
  const roots = rootsSection(sections.roots);
  const capture = captureSection(sections.capture);
  const signing = signingSection(sections.signing);

  const off = onEvent('settings', (e) => {
    switch (e?.what) {
      case 'policy':
        policy.external();
        break;
      case 'agents':
        agents.reload();
        break;
      case 'runtime':
        runtime.reload();
        break;
      case 'roots':
        roots.external();
        break;
      case 'capture':
        capture.external();
        break;
      case 'security':
        confinement.external();
        break;
    }
  });

  return {
    el,
    title: 'Security',
    route(parts: string[]) {
      const id = parts[0] as keyof typeof sections | undefined;
      if (!id || !sections[id]) return;
      if (id === 'policy' && parts[1] === 'trust') {
        const t = takeTrustRequest();
        if (t) void policy.draftTrust(t);
        return;
      }
      void Promise.all([policy.ready, agents.ready, confinement.ready, runtime.ready, roots.ready, capture.ready, signing.ready]).then(() =>
        requestAnimationFrame(() => sections[id].scrollIntoView({ block: 'start' })),
      );
    },
    destroy() {
      off();
    },
  };
}

import { describe, expect, it } from 'vitest';
import type { SecurityView } from '../api/types';
import { confinementModel, settingChanged, settingWords, weakeningWarning } from './confinement';

const view = (over: Partial<SecurityView> = {}): SecurityView => ({
  confinement: { filesystem: 'workspace', network: 'deny' },
  enforcement: { filesystem: 'workspace', network: 'deny', abi: 7, enforced: ['filesystem', 'tcp', 'udp', 'signals', 'abstract_unix_sockets'], not_enforced: [] },
  confined: true,
  ownership: 'pid_namespace',
  ...over,
});

describe('confinementModel', () => {
  it('words a fully confined setting from the backend verdict', () => {
    const m = confinementModel(view());
    expect(m.status.label).toBe('Confined');
    expect(m.status.tone).toBe('ok');
    expect(m.setting).toBe('Files: workspace only · Network: denied');
    expect(m.features.map((f) => [f.name, f.enforced])).toEqual([
      ['filesystem', true],
      ['tcp', true],
      ['udp', true],
      ['signals', true],
      ['abstract_unix_sockets', true],
    ]);
    expect(m.features[0].text).toContain('workspace');
    expect(m.unavailable).toBeNull();
    expect(m.ownership).toEqual({ name: 'pid_namespace', text: expect.stringContaining('PID namespace'), verifiable: true, reason: null });
  });

  it('never says confined when the backend does not, whatever the lists hold', () => {
    const m = confinementModel(view({ confined: false }));
    expect(m.status.label).toBe('Partly confined');
    expect(m.status.tone).toBe('warn');
  });

  it('says not confined, in the full-trust words, when nothing is enforced', () => {
    const m = confinementModel(
      view({ confinement: { filesystem: 'off', network: 'allow' }, enforcement: { filesystem: 'off', network: 'allow', abi: 7, enforced: [], not_enforced: ['filesystem', 'tcp', 'udp', 'signals', 'abstract_unix_sockets'] }, confined: false }),
    );
    expect(m.status.label).toBe('Not confined');
    expect(m.status.tone).toBe('danger');
    expect(m.status.text).toContain('YOUR full permissions');
    expect(m.features.every((f) => !f.enforced)).toBe(true);
    expect(m.features[0].text).toContain('every file');
  });

  it('lists what is enforced first and what is not after it, in the backend order', () => {
    const m = confinementModel(view({ enforcement: { filesystem: 'workspace', network: 'deny', abi: 5, enforced: ['filesystem', 'tcp'], not_enforced: ['udp', 'signals'] }, confined: false }));
    expect(m.features.map((f) => `${f.name}:${f.enforced}`)).toEqual(['filesystem:true', 'tcp:true', 'udp:false', 'signals:false']);
    expect(m.features[2].text).toContain('UDP');
  });

  it('shows the refusal reason when the kernel cannot enforce the setting', () => {
    const m = confinementModel(view({ enforcement: null, unavailable: 'this kernel has no Landlock', confined: false }));
    expect(m.status.label).toBe('Runs refused');
    expect(m.status.text).toContain('confinement_unavailable');
    expect(m.unavailable).toBe('this kernel has no Landlock');
    expect(m.features).toEqual([]);
  });

  it('keeps an unknown feature or mechanism by its name instead of dropping it', () => {
    const m = confinementModel(view({ enforcement: { filesystem: 'workspace', network: 'deny', abi: 9, enforced: ['ioctl'], not_enforced: [] }, ownership: 'new_thing' }));
    expect(m.features).toEqual([{ name: 'ioctl', label: 'ioctl', text: 'enforced', enforced: true }]);
    expect(m.ownership.text).toBe('Mechanism: new_thing.');
  });

  it('carries why cleanup cannot be verified', () => {
    const m = confinementModel(view({ ownership: 'process-group', ownershipUnverifiable: 'not a subreaper' }));
    expect(m.ownership.verifiable).toBe(false);
    expect(m.ownership.reason).toBe('not a subreaper');
  });
});

describe('weakeningWarning', () => {
  const on = { filesystem: 'workspace', network: 'deny' } as const;
  it('warns, naming each part, when confinement is turned off', () => {
    const w = weakeningWarning(on, { filesystem: 'off', network: 'allow' });
    expect(w).toContain('every file you can');
    expect(w).toContain('use the network');
    expect(weakeningWarning(on, { filesystem: 'off', network: 'deny' })).not.toContain('network');
    expect(weakeningWarning(on, { filesystem: 'workspace', network: 'allow' })).not.toContain('every file');
  });
  it('is silent when nothing weakens', () => {
    expect(weakeningWarning(on, on)).toBeNull();
    expect(weakeningWarning({ filesystem: 'off', network: 'allow' }, on)).toBeNull();
    expect(weakeningWarning({ filesystem: 'off', network: 'allow' }, { filesystem: 'off', network: 'allow' })).toBeNull();
  });
  it('settingChanged and settingWords', () => {
    expect(settingChanged(on, on)).toBe(false);
    expect(settingChanged(on, { ...on, network: 'allow' })).toBe(true);
    expect(settingWords({ filesystem: 'off', network: 'allow' })).toBe('Files: off (full access) · Network: allowed');
  });
});

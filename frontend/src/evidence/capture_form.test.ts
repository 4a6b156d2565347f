import { describe, expect, it } from 'vitest';
import type { CaptureSettings } from '../api/types';
import { captureProgress, scenarioTemplates } from './capture_form';

const policy: CaptureSettings = { enabled: true, executableRoots: ['/usr/bin'], workingRoots: ['/home/ada/work', '/tmp/x'], allowedEnv: ['PATH'], allowExternalNetwork: true, autoGrant: true };

describe('scenarioTemplates', () => {
  it('fills the working directory, shell and environment from the policy in effect', () => {
    for (const t of scenarioTemplates(policy)) {
      const sc = JSON.parse(t.text);
      expect(sc.approved).toBe(true);
      expect(sc.working_directory).toBe('/home/ada/work');
      expect(sc.executable).toBe('/usr/bin/sh');
      expect(sc.environment).toEqual({ PATH: '/usr/bin:/bin' });
      expect(Array.isArray(sc.arguments)).toBe(true);
    }
  });

  it('leaves a placeholder the backend will refuse when the policy has no working root', () => {
    const sc = JSON.parse(scenarioTemplates(null)[0]!.text);
    expect(sc.working_directory).toBe('/path/inside/a/working/root');
    expect(sc.executable).toBe('/bin/sh');
    expect(sc.environment).toEqual({});
  });
});

describe('captureProgress', () => {
  const ev = { capture_id: 'cap_x', elapsed_ms: 2500, timeout_ms: 10000 };
  it('is the fraction of the time limit while running, clamped', () => {
    expect(captureProgress({ ...ev, state: 'running' }).fraction).toBe(0.25);
    expect(captureProgress({ ...ev, state: 'running', elapsed_ms: 20000 }).fraction).toBe(1);
    expect(captureProgress({ ...ev, state: 'running', timeout_ms: 0 }).fraction).toBe(1);
    expect(captureProgress({ ...ev, state: 'running' }).label).toMatch(/^Running · /);
  });
  it('is indeterminate while saving, and says the outcome', () => {
    expect(captureProgress({ ...ev, state: 'saving' }).fraction).toBeNull();
    expect(captureProgress({ ...ev, state: 'cancelled' }).label).toMatch(/nothing was saved/);
    expect(captureProgress({ ...ev, state: 'failed', error: { code: 'x', category: 'y', message: 'boom' } }).label).toBe('Failed · boom');
  });
});

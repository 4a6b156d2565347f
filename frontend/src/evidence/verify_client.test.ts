import { afterEach, describe, expect, it, vi } from 'vitest';
import { answerVerify } from './verify';
import { verifyInBackground } from './verify_client';

// A real capture written by `gatehouse capture-process`, kept as a fixture.
import FIXTURE from './testdata/capture.json?raw';

// A stand-in for a webview's Worker that cannot load its script: the
// browser reports that as an error event after the worker was made.
class FailingWorker {
  onmessage: ((e: MessageEvent) => void) | null = null;
  onerror: ((e: ErrorEvent) => void) | null = null;
  terminated = false;
  postMessage() {
    setTimeout(() => this.onerror?.({ message: 'script load refused', preventDefault() {} } as ErrorEvent), 0);
  }
  terminate() {
    this.terminated = true;
  }
}

afterEach(() => vi.unstubAllGlobals());

describe('verifyInBackground', () => {
  it('hands the check to the page when the worker fails, never skipping it', async () => {
    vi.stubGlobal('Worker', FailingWorker);
    const good = verifyInBackground({ text: FIXTURE });
    expect(good.where).toBe('worker');
    expect(await good.done).toEqual(await answerVerify({ text: FIXTURE }));
    const reply = await good.done;
    expect('checks' in reply && reply.checks.every((c) => c.ok !== false)).toBe(true);

    const tampered = FIXTURE.replace('"timeout_ms": 30000', '"timeout_ms": 30001');
    expect(tampered).not.toBe(FIXTURE);
    const bad = await verifyInBackground({ text: tampered }).done;
    expect(bad).toEqual(await answerVerify({ text: tampered }));
    expect('checks' in bad && bad.checks.some((c) => c.ok === false)).toBe(true);
  });

  it('runs on the page where no Worker exists', async () => {
    vi.stubGlobal('Worker', undefined);
    const v = verifyInBackground({ text: FIXTURE });
    expect(v.where).toBe('page');
    expect(await v.done).toEqual(await answerVerify({ text: FIXTURE }));
  });
});

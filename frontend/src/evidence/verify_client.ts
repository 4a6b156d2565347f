// Runs answerVerify in a web worker (verify_worker.ts), one worker per
// request, ended when it answers or the caller gives up. Where workers
// cannot run, the same check runs on the page: it is slower there, never
// skipped.

import { answerVerify, type VerifyReply, type VerifyRequest } from './verify';

/** A verification in progress: `done` resolves with the reply; cancel()
 * ends the worker (done then never resolves). */
export interface Verification {
  done: Promise<VerifyReply>;
  /** Where it runs: "worker", or "page" when workers are unavailable. */
  where: 'worker' | 'page';
  cancel(): void;
}

export function verifyInBackground(req: VerifyRequest): Verification {
  let worker: Worker | null = null;
  try {
    worker = new Worker(new URL('./verify_worker.ts', import.meta.url), { type: 'module' });
  } catch {
    worker = null;
  }
  if (!worker) return { done: answerVerify(req), where: 'page', cancel() {} };
  const w = worker;
  const done = new Promise<VerifyReply>((resolve) => {
    w.onmessage = (e: MessageEvent<VerifyReply>) => {
      w.terminate();
      resolve(e.data);
    };
    w.onerror = (e: ErrorEvent) => {
      w.terminate();
      resolve({ error: `the verification worker failed: ${e.message || 'no message'}` });
    };
  });
  w.postMessage(req);
  return { done, where: 'worker', cancel: () => w.terminate() };
}

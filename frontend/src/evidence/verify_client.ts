// Runs answerVerify in a web worker (verify_worker.ts), one worker per
// request, ended when it answers or the caller gives up. Where workers
// cannot run, the same check runs on the page: it is slower there, never
// skipped.

import { answerVerify, type VerifyReply, type VerifyRequest } from './verify';

/** A verification in progress: `done` resolves with the reply; cancel()
 * ends the worker (done then never resolves). */
export interface Verification {
  done: Promise<VerifyReply>;
  /** Where it starts: "worker", or "page" when workers are unavailable
   * (a worker that fails hands the check to the page). */
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
    // A worker that cannot start or dies (a webview that refuses module
    // workers from its asset scheme, say) hands the same check to the
    // page: slower, never skipped.
    w.onerror = (e: ErrorEvent) => {
      e.preventDefault();
      w.terminate();
      resolve(answerVerify(req));
    };
  });
  w.postMessage(req);
  return { done, where: 'worker', cancel: () => w.terminate() };
}

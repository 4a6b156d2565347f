// "Trust this revision…" from the consent dialog: the scope the person may
// add, handed to Security → Execution policy as an unsaved draft row. The
// policy changes only when the person saves it there (never silently);
// whether the scope is valid is the server's answer on Save.

/** The fields of a trusted-revision scope drafted from a proposal. */
export interface TrustRequest {
  skill: string;
  revision: string;
  agentId: string;
  workspace: string;
  timeoutMsCeiling: number;
  maxOutputBytesCeiling: number;
}

/** Where Security's policy section is. */
export const TRUST_ROUTE = '#/security/policy/trust';

let pending: TrustRequest | null = null;

/** Keeps r for Security and opens it (routing again when already there). */
export function requestTrust(r: TrustRequest): void {
  pending = { ...r };
  if (location.hash === TRUST_ROUTE) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = TRUST_ROUTE;
}

/** The request kept for Security, once (null when there is none). */
export function takeTrustRequest(): TrustRequest | null {
  const r = pending;
  pending = null;
  return r;
}

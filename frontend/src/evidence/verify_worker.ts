// The browser's re-verification of an Evidence file, in a web worker: the
// page shows the first screen while this recomputes every commitment
// (WebCrypto SHA-256 over RFC 8785 JSON) on its own copy of the file.

import { answerVerify, type VerifyRequest } from './verify';

self.onmessage = async (e: MessageEvent<VerifyRequest>) => {
  self.postMessage(await answerVerify(e.data));
};

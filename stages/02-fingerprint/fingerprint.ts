// The fingerprint of a request: a hash of its canonical JSON body.
//
// It covers the whole parsed body (from, to, amount, memo, metadata), because
// any difference there is a different request. It does not cover headers: who
// sends the request is the key's scope (stage 5), not its payload. And it is
// never taken over the raw body text: a client library that reorders fields or
// adds a space on retry is still sending the same request.
export function fingerprint(payload: unknown): string {
  // TODO: return the SHA-256 of canonicalize(payload), as hex:
  //   createHash('sha256').update(canonical, 'utf8').digest('hex')
  // (createHash from 'node:crypto', canonicalize from './canonicalize.ts').
  throw new Error(`fingerprint.ts: fingerprint() is not written yet (it was given a value of type ${typeof payload})`)
}

// Given to stage 3 on, solved: a copy of solutions/02-fingerprint/fingerprint.ts.
// test/given.test.ts keeps it identical to that file; edit the solution, then copy.
//
// The fingerprint of a request: a SHA-256 of its canonical JSON body.
//
// It covers the whole parsed body (from, to, amount, memo, metadata), because
// any difference there is a different request. It does not cover headers: who
// sends the request is the key's scope (stage 5), not its payload. And it is
// never taken over the raw body text: a client library that reorders fields or
// adds a space on retry is still sending the same request.
import { createHash } from 'node:crypto'
import { canonicalize } from './canonicalize.ts'

export function fingerprint(payload: unknown): string {
  return createHash('sha256').update(canonicalize(payload), 'utf8').digest('hex')
}

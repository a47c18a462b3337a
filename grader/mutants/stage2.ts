// Stage 2 mutants: the three fingerprints seen in the field that are not one.
import type { Mutant } from './mutant.ts'

export const stage2Mutants: Mutant[] = [
  {
    id: 'no-fingerprint',
    stage: 2,
    title: 'Key exists, so success: an amended amount is told "already processed" and silently ignored',
    mustFail: 'amended-amount',
    edits: [
      {
        file: 'idempotency.ts',
        find: 'return claim.fingerprint === request.fingerprint ? alreadyProcessed(request.key) : keyReused()',
        replace: 'return alreadyProcessed(request.key) // the fingerprint is stored but never compared',
      },
    ],
  },
  {
    id: 'raw-body-fingerprint',
    stage: 2,
    title: 'Fingerprint over the raw body text: a retry with reordered fields or another space gets 422',
    mustFail: 'reserialized-retry',
    edits: [{ file: 'idempotency.ts', find: 'fingerprint: fingerprint(op.payload)', replace: 'fingerprint: fingerprint(op.rawBody)' }],
  },
  {
    id: 'top-level-sort-only',
    stage: 2,
    title: 'canonicalize sorts the top-level keys only: nested objects keep the client\'s order',
    mustFail: 'reserialized-retry',
    edits: [
      {
        file: 'canonicalize.ts',
        find: 'canonicalize((value as Record<string, unknown>)[k])',
        replace: 'JSON.stringify((value as Record<string, unknown>)[k])',
      },
    ],
  },
]

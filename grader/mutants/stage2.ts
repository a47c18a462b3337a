// Stage 2 mutants: the fingerprints seen in the field that are not one, a key
// that forgets its first body, and canonical forms that are almost RFC 8785.
import { editsOf, type Mutant } from './mutant.ts'

const layer = editsOf('idempotency.ts')
const store = editsOf('keyStore.ts')
const jcs = editsOf('canonicalize.ts')

/** The fingerprint taken over something else than the parsed body. */
const fingerprintOf = (input: string) => layer('identify', 'fingerprint(op.payload)', `fingerprint(${input})`)

export const stage2Mutants: Mutant[] = [
  {
    id: 'no-fingerprint',
    stage: 2,
    title: 'Key exists, so success: an amended amount is told "already processed" and silently ignored',
    mustFail: 'amended-amount',
    edits: [
      layer(
        'handle',
        'claim.fingerprint === request.fingerprint ?…keyReused()',
        'alreadyProcessed(request.key) // the fingerprint is stored but never compared',
      ),
    ],
  },
  {
    id: 'raw-body-fingerprint',
    stage: 2,
    title: 'Fingerprint over the raw body text: a retry with reordered fields or another space gets 422',
    mustFail: 'reserialized-retry',
    edits: [fingerprintOf('op.rawBody')],
  },
  {
    id: 'top-level-sort-only',
    stage: 2,
    title: "canonicalize sorts the top-level keys only: nested objects keep the client's order",
    mustFail: 'reserialized-retry',
    edits: [jcs('canonicalize', 'canonicalize((value as Record<string, unknown>)[k])', 'JSON.stringify((value as Record<string, unknown>)[k])')],
  },
  {
    id: 'rebind-on-mismatch',
    stage: 2,
    title: 'a 422 rebinds the key to the new body: the amendment, sent again, is "already processed" and silently ignored',
    mustFail: 'amended-amount',
    edits: [
      store(
        'claim',
        "return { kind: 'duplicate', fingerprint: find.get(key)!.fingerprint }",
        `const stored = find.get(key)!.fingerprint
        // Remember the latest body: the client's correction is what the key means now.
        if (stored !== fingerprint) db.prepare('UPDATE idempotency_keys SET fingerprint = ? WHERE key = ?').run(fingerprint, key)
        return { kind: 'duplicate', fingerprint: stored }`,
      ),
    ],
  },
  {
    id: 'fingerprint-money-fields-only',
    stage: 2,
    title: 'the fingerprint leaves out memo and metadata ("they move no money"): a changed memo is a plain duplicate',
    mustFail: 'fingerprint-covers-body',
    edits: [
      layer(
        'identify',
        'return { key, fingerprint: fingerprint(op.payload) }',
        `const { memo: _memo, metadata: _metadata, ...money } = op.payload as Record<string, unknown> // memo and metadata move no money
    return { key, fingerprint: fingerprint(money) }`,
      ),
    ],
  },
  {
    id: 'loose-equality',
    stage: 2,
    title:
      'the fingerprint equates loosely equal values of different JSON types: false is 0, true is 1, "5" is 5 (as == has it), and null is 0 too, so {"approved": false} then {"approved": 0} under one key replays the first transfer',
    mustFail: 'fingerprint-covers-body',
    edits: [
      jcs(
        'canonicalize',
        "typeof value === 'boolean') return String(value)",
        "typeof value === 'boolean' || String(Number(value)) === value) return String(Number(value)) // loosely equal is equal",
      ),
    ],
  },
  {
    id: 'arrays-sorted',
    stage: 2,
    title: "canonicalize sorts arrays as it sorts an object's keys: the same invoice lines in another order are taken for the same body",
    mustFail: 'fingerprint-covers-body',
    edits: [jcs('canonicalize', "`[${value.map(canonicalize).join(',')}]`", "`[${value.map(canonicalize).sort().join(',')}]`")],
  },
  {
    id: 'absent-as-empty',
    stage: 2,
    title:
      'the fingerprint fills in the optional fields (memo "", metadata {}) before hashing: a retry that leaves out an empty memo replays the first transfer',
    mustFail: 'fingerprint-covers-body',
    edits: [fingerprintOf("{ memo: '', metadata: {}, ...(op.payload as object) }")],
  },
  {
    id: 'locale-key-sort',
    stage: 2,
    title: 'canonicalize sorts keys with localeCompare, not by UTF-16 code units: "B" and "b", "10" and "9" land in the wrong order',
    mustFail: 'canonicalize-rfc8785',
    edits: [jcs('canonicalize', '.sort()', '.sort((x, y) => x.localeCompare(y))')],
  },
  {
    id: 'lone-surrogates-accepted',
    stage: 2,
    title: 'canonicalize lets a lone surrogate through (JSON.stringify escapes it), though it is not I-JSON',
    mustFail: 'canonicalize-rfc8785',
    edits: [jcs('canonicalString', 'if (!s.isWellFormed())…\n', '// JSON.stringify writes a lone surrogate as \\udXXX, which is text like any other.\n')],
  },
  {
    id: 'fingerprint-covers-path',
    stage: 2,
    title: 'the fingerprint covers the path as typed with the body ("the whole request"): a retry that a proxy re-spelled (/TRANSFERS/) gets 422',
    mustFail: 'histories-2',
    edits: [fingerprintOf('{ path: op.path, body: op.payload }')],
  },
]

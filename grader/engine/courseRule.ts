// The course's conventions that go beyond draft-ietf-httpapi-idempotency-key-header-07.
//
// An engineer grading a real service against the bank must be able to tell a
// protocol flaw from a house rule, so every failure about one of these says
// so, in one wording, with the draft section that is silent (or looser) on
// it. docs/ietf-conformance.md ("Beyond the draft") lists the same rules.

import { type Line, type Phrase, phrases } from '#harness/i18n/phrase.ts'

/** Each convention, and the section of draft-07 that it goes beyond. */
export const COURSE_RULES = {
  /** 1–255 printable ASCII characters: §5 asks for a published format, not this one. */
  keyFormat: '5',
  /** The bare form accepted as the same key: §2.1 defines only the quoted sf-string. */
  quotedEqualsBare: '2.1',
  /** A different payload gets 422 even while the first is in flight: §2.7 lists 409 and 422 without an order. */
  unprocessableOverConflict: '2.7',
  /** Retry-After on a 409: §2.7 asks only for a problem description. */
  retryAfter: '2.7',
  /** `Idempotent-Replayed: true` on a replay, never on a first answer: §2.6 has no marker. */
  replayMarker: '2.6',
  /** A 5xx is released, not stored: §2.6 says to replay "success or an error". */
  failuresNotStored: '2.6',
  /**
   * A lease on every in_progress claim, LAB_LEASE_MS long, after which a retry takes the claim over (and the
   * key's row records who holds it): §2.6 asks for a conflict while a request is in flight, and says nothing
   * of one whose process died.
   */
  lease: '2.6',
  /**
   * A key expires LAB_KEY_TTL_MS after its FIRST request, never extended, and is a new request from then on:
   * §2.3 lets a resource expire keys, and says nothing of when or from what.
   */
  expiry: '2.3',
  /** Expired keys are purged, at least once per min(TTL, 60 s): §2.3 only allows purging (MAY). */
  purge: '2.3',
  /** `Idempotency-Key-Policy: ttl, lease, scope` on every money-route response: §2.3 asks for the policy in the documentation. */
  policyHeader: '2.3',
} as const

export type CourseRule = keyof typeof COURSE_RULES

const say = phrases('courseRule', {
  label: 'course rule, beyond draft-07 §{section}',
  labelled: '{message} ({label})',
})

/** The label a failure about a course convention carries. */
export const courseRuleLabel = (rule: CourseRule): Phrase => say('label', { section: COURSE_RULES[rule] })

/** `message`, labelled as a course convention rather than a protocol requirement. */
export const courseRule = (rule: CourseRule, message: Line): Phrase => say('labelled', { message, label: courseRuleLabel(rule) })

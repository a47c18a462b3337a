// The course's conventions that go beyond draft-ietf-httpapi-idempotency-key-header-07.
//
// An engineer grading a real service against the bank must be able to tell a
// protocol flaw from a house rule, so every failure about one of these says
// so, in one wording, with the draft section that is silent (or looser) on
// it. docs/ietf-conformance.md ("Beyond the draft") lists the same rules.

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
} as const

export type CourseRule = keyof typeof COURSE_RULES

/** The label a failure about a course convention carries. */
export const courseRuleLabel = (rule: CourseRule) => `course rule, beyond draft-07 §${COURSE_RULES[rule]}`

/** `message`, labelled as a course convention rather than a protocol requirement. */
export const courseRule = (rule: CourseRule, message: string) => `${message} (${courseRuleLabel(rule)})`

// RFC 9457 problem details. Every error the bank sends is one of these, and
// every response (success or not) is an Outcome: status, headers and the exact
// body bytes. Stages that store and replay responses store exactly this.
import type { ServerResponse } from 'node:http'

export type Outcome = {
  status: number
  headers: Record<string, string>
  body: string
}

export const JSON_TYPE = 'application/json'
export const PROBLEM_TYPE = 'application/problem+json'

export function jsonOutcome(status: number, value: unknown, headers: Record<string, string> = {}): Outcome {
  return { status, headers: { 'Content-Type': JSON_TYPE, ...headers }, body: JSON.stringify(value) }
}

/**
 * `slug` becomes the problem `type`, a relative URI documented in CONTRACT.md
 * (for example `/problems/insufficient-funds`).
 */
export function problem(
  status: number,
  slug: string,
  title: string,
  detail: string,
  extra: { headers?: Record<string, string>; members?: Record<string, unknown> } = {},
): Outcome {
  const body = { type: `/problems/${slug}`, title, status, detail, ...extra.members }
  return { status, headers: { 'Content-Type': PROBLEM_TYPE, ...extra.headers }, body: JSON.stringify(body) }
}

/** Thrown by middleware to answer with a problem. */
export class HttpProblem extends Error {
  constructor(readonly outcome: Outcome) {
    super(`HTTP ${outcome.status}`)
  }
}

/**
 * Sends an outcome with the raw Node API, so the bytes sent are exactly
 * outcome.body: Express would add a charset and an ETag, and a replay must
 * match byte for byte.
 */
export function writeOutcome(res: ServerResponse, outcome: Outcome, extraHeaders: Record<string, string> = {}): void {
  res.writeHead(outcome.status, {
    ...extraHeaders,
    ...outcome.headers,
    'Content-Length': String(Buffer.byteLength(outcome.body)),
  })
  res.end(outcome.body)
}

// Text the bank's stores can hold. SQLite keeps any JavaScript string, but
// PostgreSQL's text (and jsonb) refuses U+0000, and its UTF-8 has no form for
// a lone UTF-16 surrogate (node-postgres would send U+FFFD instead: a
// different string than the client wrote). So every string a client sends
// (account ids in bodies and paths, client names, memo, metadata's strings
// and member names at any depth, the Idempotency-Key header) is held to this
// one rule at the edge, and both banks refuse the same input the same way
// (schemas.ts; storableParam below, in both apps; keyLines.ts).
import type { NextFunction, Request, Response } from 'express'
import { HttpProblem, problem } from './problem.ts'

/** Why `s` cannot be stored, or undefined when it can. */
export function unstorableReason(s: string): string | undefined {
  if (s.includes('\u0000')) return 'holds U+0000 (NUL), which the bank cannot store'
  if (!s.isWellFormed()) return 'holds a lone surrogate, which the bank cannot store'
  return undefined
}

export type TextIssue = { path: (string | number)[]; message: string }

/** Issues beyond this many are not listed (as strictJson.ts does). */
const MAX_ISSUES = 20

/**
 * Every string and member name inside a JSON value that cannot be stored,
 * with its path below `value`. An explicit stack: no recursion, whatever the depth.
 */
export function unstorableStrings(value: unknown): TextIssue[] {
  const issues: TextIssue[] = []
  const stack: Array<{ value: unknown; path: (string | number)[] }> = [{ value, path: [] }]
  while (stack.length > 0 && issues.length < MAX_ISSUES) {
    const { value: v, path } = stack.pop()!
    if (typeof v === 'string') {
      const why = unstorableReason(v)
      if (why) issues.push({ path, message: `the string ${why}` })
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: [...path, i] })
    } else if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v)
      for (const [name] of entries) {
        const why = unstorableReason(name)
        if (why) issues.push({ path: [...path, name], message: `the member name ${why}` })
      }
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ value: entries[i]![1], path: [...path, entries[i]![0]] })
    }
  }
  return issues.slice(0, MAX_ISSUES)
}

/**
 * For `app.param('id', storableParam)`: a path segment that cannot be stored
 * names nothing the bank could have, and is answered like a path Express
 * cannot decode (`%ED%A0%80`, a lone surrogate's bytes): 400 bad-request.
 */
export function storableParam(_req: Request, _res: Response, next: NextFunction, value: unknown, name: string): void {
  const why = typeof value === 'string' ? unstorableReason(value) : undefined
  next(why ? new HttpProblem(problem(400, 'bad-request', 'Bad request', `The path segment {${name}} ${why}.`)) : undefined)
}

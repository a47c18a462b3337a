// The request log of one day: one JSON object per line, one line per attempt.
// The generator writes it, the replayer reads it, logs/README.md explains
// every field. Field order is fixed so that a seed reproduces the file byte
// for byte.
import { z } from 'zod'
import { FAULTS, KINDS } from './faults.ts'

export const CLIENTS = ['mobile-app', 'web-app', 'teller-desk', 'partner-batch'] as const
export type ClientName = (typeof CLIENTS)[number]

/** Why this attempt was sent. Retries are sent only while the client still has no final answer. */
export const CAUSES = ['first', 'double-tap', 'retry', 'amendment'] as const
export type Cause = (typeof CAUSES)[number]

const TIME = /^(\d{2}):(\d{2}):(\d{2})\.(\d{3})$/

export const AttemptLine = z.strictObject({
  t: z.string().regex(TIME),
  client: z.enum(CLIENTS),
  intent: z.string().regex(/^i\d{5,}$/),
  kind: z.enum(KINDS),
  key: z.string().min(1),
  method: z.literal('POST'),
  path: z.enum(['/transfers', '/deposits']),
  attempt: z.number().int().min(1),
  cause: z.enum(CAUSES),
  fault: z.enum(FAULTS),
  body: z.string(),
})
export type AttemptLine = z.infer<typeof AttemptLine>

const DAY_MS = 24 * 60 * 60 * 1000

/** Milliseconds since midnight as HH:MM:SS.mmm. */
export function formatTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= DAY_MS) throw new RangeError(`${ms} ms is not a time of the day`)
  const pad = (n: number, w = 2) => String(n).padStart(w, '0')
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}.${pad(ms % 1000, 3)}`
}

export function parseTime(t: string): number {
  const m = TIME.exec(t)
  if (!m) throw new RangeError(`"${t}" is not HH:MM:SS.mmm`)
  return ((Number(m[1]) * 60 + Number(m[2])) * 60 + Number(m[3])) * 1000 + Number(m[4])
}

export const isTimeOfDay = (ms: number) => ms >= 0 && ms < DAY_MS

/** One line of the file, fields in the documented order. */
export function formatLine(line: AttemptLine): string {
  const { t, client, intent, kind, key, method, path, attempt, cause, fault, body } = line
  return JSON.stringify({ t, client, intent, kind, key, method, path, attempt, cause, fault, body })
}

export class DayFormatError extends Error {}

/** Parses and validates a whole day; the error names the line that is wrong. */
export function parseDay(text: string): AttemptLine[] {
  const lines: AttemptLine[] = []
  const rows = text.split('\n')
  if (rows.at(-1) === '') rows.pop()
  rows.forEach((row, i) => {
    let value: unknown
    try {
      value = JSON.parse(row)
    } catch {
      throw new DayFormatError(`line ${i + 1} is not JSON`)
    }
    const parsed = AttemptLine.safeParse(value)
    if (!parsed.success) throw new DayFormatError(`line ${i + 1}: ${parsed.error.issues.map((e) => `${e.path.join('.')}: ${e.message}`).join('; ')}`)
    lines.push(parsed.data)
  })
  return lines
}

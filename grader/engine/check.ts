// What a check is. Each stage lists its checks as data (grader/checks/stageN.ts);
// the engine (grading.ts) is generic.
import type { Settings } from '#bank/config.ts'
import type { BankClient } from '#harness/bankClient.ts'
import type { GradeClock } from '#harness/gradeClock.ts'
import type { Stage } from '#harness/course.ts'
import { CheckFailure, type FailureDetails } from '#harness/failure.ts'
import type { Exchange, Reply } from '#harness/http.ts'
import { type Line, listOf, type Phrase, phrases } from '#harness/i18n/phrase.ts'
import type { Rng } from '#harness/rng.ts'
import type { CallResult, ExportRequest } from '../policing/callExport.ts'
import type { Coverage } from './checkResult.ts'

export type StartOptions = {
  /** The instance's settings, e.g. { leaseMs: 300 }; every other one is the bank's default. */
  settings?: Partial<Settings>
  /** Share the default instance's database (true) or get a fresh one (false). */
  sameDatabase?: boolean
  /** Share this instance's database instead (one the check started, say): overrides sameDatabase. */
  databaseOf?: BankClient
}

export type CheckContext = {
  seed: number
  rng: Rng
  /** The stage being graded (checks of earlier stages also run, as regression). */
  gradedStage: number
  /** The server every check shares, started with default settings. */
  bank: BankClient
  /**
   * Another instance of the graded stage's server, as `options` ask, for
   * this check alone: an idle process of the grade given these settings
   * (and database), or a new one (instancePool.ts).
   */
  startServer(options?: StartOptions): Promise<BankClient>
  /** Folder holding stage `n`'s learner files for this run (for checks that call learner code directly). */
  stageDir(n: number): string
  /**
   * Calls, reads or runs (a SQL query) an export of a learner file, in a
   * child process of its own: sandboxed as the server is, and limited in
   * time (learnerCode.ts). A query's files must be in the grade's data folder.
   */
  callExport(file: string, request: ExportRequest, timeoutMs?: number): Promise<CallResult[]>
  /** Path of the default instance's SQLite file (open it read-only). */
  dbPath: string
  /** A line for the report, shown under the check whether it passes or not. */
  note(line: Line): void
  /** Partial credit: the points this check earns if it then fails (a pass always earns all of them). */
  award(points: number): void
  /** A histories check's reach, for its result (`grade --coverage` prints it). */
  reportCoverage(coverage: Coverage): void
  signal: AbortSignal
  /**
   * The grade's clock: what every server's Date.now() and the database's
   * now() read. A check whose property is a moment moves it (timeline.ts).
   */
  clock: GradeClock
  /** How many random histories a histories check runs (--histories). */
  histories: number
  /**
   * Whether a failing histories check shrinks its history to the shortest
   * that still fails (the default). The repetitions judge verdicts only: a
   * shrink changes a failure's picture, never the verdict, and costs seconds.
   */
  shrink: boolean
  /** The command that runs this check alone again, on the same code with the same seed. */
  rerun: string
}

/**
 * What a check needs besides the HTTP contract. A server graded with
 * `--server CMD` offers only the contract, so such checks are skipped there:
 * 'database' reads the layer's tables in the bank's database, SQLite file or
 * PostgreSQL (white box, layerRows.ts); 'sqlite-file' needs the SQLite file
 * itself (its schema, or a query run on it); 'learner-code' calls an export
 * of the stage's TypeScript.
 */
export type CheckNeeds = 'database' | 'sqlite-file' | 'learner-code'

export type Check = {
  id: string
  title: string
  points: number
  /** Shown when the check fails: where to look, not the answer. */
  hint: string
  timeoutMs: number
  needs?: CheckNeeds
  /**
   * Its property is a moment (a lease, a TTL, a purge, Retry-After): it moves
   * the clock. When the layer reads a clock the grader cannot move, it is run
   * again on the real clock, and that run decides (runCheck.ts).
   */
  timed?: true
  /**
   * false: not run as regression when a later stage is graded (a histories
   * check: the later stage's model holds every earlier promise).
   */
  regression?: false
  run(ctx: CheckContext): Promise<void>
}

/** A check as a grade runs it: with the stage it belongs to (its own, or an earlier one's, as regression). */
export type GradedCheck = { check: Check; stage: Stage }

/** A stage on PostgreSQL has no SQLite file: a grade of it skips the checks that open one. */
export function skippedOnDatabase(check: Check, graded: Stage): boolean {
  return graded.database === 'postgres' && check.needs === 'sqlite-file'
}

const notJudgedPhrase = phrases('notJudged', { because: 'not judged: {why} (see {blockedBy})' })
const notJudgedSaid = (why: Line, blockedBy: string) => notJudgedPhrase('because', { why, blockedBy })

/**
 * A check that cannot judge its own property on this layer, because something
 * another check tests (its precondition) is missing: e.g. with no lease at all
 * there is no takeover to judge. It names what it saw and that other check,
 * which fails on the same evidence; it earns no points and is not a failure
 * of its own (one cause, one failed check).
 */
export class NotJudged extends Error {
  constructor(
    /** What the check saw that it cannot judge without, e.g. "no lease: a retry a year after the claim still got 409". */
    readonly why: Line,
    /** The check whose property is missing, and which fails for it. */
    readonly blockedBy: string,
  ) {
    super(String(notJudgedSaid(why, blockedBy)))
  }

  /** Its message, said in the reader's language when printed. */
  get said(): Phrase {
    return notJudgedSaid(this.why, this.blockedBy)
  }
}

export function notJudged(why: Phrase, blockedBy: string): never {
  throw new NotJudged(why, blockedBy)
}

// The engine's own sentences around a check's. A check's `why` and a failure's
// message are Phrases, never strings, so that every one of them is a template
// the packs translate: an English literal there is a type error.
const say = phrases('expect', {
  problemMediaType: '{why}: errors must be application/problem+json (RFC 9457)',
  problemBody: '{why}: the problem body needs "title" and "status": {status}',
  httpStatus: 'HTTP {status}',
  contentType: 'Content-Type: {type}',
  none: '(none)',
})

/** A header or a value that was not there, as an expected or got says it. */
export const NONE: Phrase = say('none')

export function fail(message: Phrase, details: FailureDetails = {}): never {
  throw new CheckFailure(message, details)
}

export function expectStatus(reply: Reply, expected: number | number[], why: Phrase): void {
  const ok = Array.isArray(expected) ? expected.includes(reply.status) : reply.status === expected
  if (!ok)
    fail(why, {
      exchange: reply.exchange,
      expected: Array.isArray(expected) ? say('httpStatus', { status: listOf(expected.map(String), 'or') }) : `HTTP ${expected}`,
      got: `HTTP ${reply.status}`,
    })
}

/** An RFC 9457 problem: the status, the media type, and a body with type/title/status. */
export function expectProblem(reply: Reply, status: number, why: Phrase): void {
  expectStatus(reply, status, why)
  const type = reply.headers['content-type'] ?? ''
  if (!type.startsWith('application/problem+json'))
    fail(say('problemMediaType', { why }), {
      exchange: reply.exchange,
      expected: 'Content-Type: application/problem+json',
      got: say('contentType', { type: type || NONE }),
    })
  const body = reply.json
  if (!body || typeof body.title !== 'string' || body.status !== status) fail(say('problemBody', { why, status }), { exchange: reply.exchange })
}

export function expectEqual<T>(got: T, expected: T, why: Phrase, exchange?: Exchange): void {
  const g = JSON.stringify(got)
  const e = JSON.stringify(expected)
  if (g !== e) fail(why, { exchange, expected: e, got: g })
}

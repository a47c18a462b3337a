// The results store: one SQLite file in which every grading run accumulates
// (roster runs and imported CI results alike). docs/instructors.md documents
// the tables; `npm run scores` reads them.
import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import Database from 'better-sqlite3'
import { repoRoot } from '#harness/paths.ts'
import { stageScore } from '#grader/engine/gradeResult.ts'
import type { GradeSummary } from './resultSchema.ts'

export const DEFAULT_STORE = resolve(repoRoot, 'results', 'grades.sqlite')

/** How a run ended: graded normally, killed at the time limit, or the grader itself stopped. */
export type Outcome = 'graded' | 'time limit' | 'grader failed'

/** What the store keeps of a grade result. */
export type StoredResult = Pick<GradeSummary, 'stage' | 'slug' | 'seed' | 'score' | 'maxScore' | 'durationMs' | 'rerun'> & { checks: StoredCheck[] }

export type RunRecord = {
  learner: string
  gradedAt: string
  outcome: Outcome
  /** Why a run was not graded normally (empty when it was). */
  reason: string
  /** Where the run came from: the roster folder, or the imported file. */
  origin: string
  result: StoredResult
}

export type StoredCheck = {
  id: string
  stage: number
  title: string
  status: 'pass' | 'fail' | 'timeout' | 'error' | 'skipped' | 'not-judged'
  points: number
  maxPoints: number
  message: string
}

export type StoredRun = {
  id: number
  learner: string
  stage: number
  slug: string
  seed: number
  gradedAt: string
  outcome: Outcome
  reason: string
  /** The stage's score (stageScore: its own checks), as the grade result said it. */
  score: number
  maxScore: number
  durationMs: number
  rerun: string
  origin: string
  checks: StoredCheck[]
}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS runs (
    id          INTEGER PRIMARY KEY,
    learner     TEXT    NOT NULL,
    stage       INTEGER NOT NULL,
    slug        TEXT    NOT NULL,
    seed        INTEGER NOT NULL,
    graded_at   TEXT    NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('graded', 'time limit', 'grader failed')),
    reason      TEXT    NOT NULL,
    score       INTEGER NOT NULL,
    max_score   INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    rerun       TEXT    NOT NULL,
    origin      TEXT    NOT NULL,
    -- The same result file imported twice is one run, not two.
    UNIQUE (learner, stage, seed, graded_at)
  );
  CREATE TABLE IF NOT EXISTS check_results (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    check_id   TEXT    NOT NULL,
    stage      INTEGER NOT NULL,
    title      TEXT    NOT NULL,
    status     TEXT    NOT NULL CHECK (status IN ('pass', 'fail', 'timeout', 'error', 'skipped', 'not-judged')),
    points     INTEGER NOT NULL,
    max_points INTEGER NOT NULL,
    message    TEXT    NOT NULL,
    PRIMARY KEY (run_id, position)
  );
  -- Who a roster held when it was graded: a learner never graded still has a row in the scores.
  CREATE TABLE IF NOT EXISTS roster_learners (
    origin    TEXT NOT NULL,
    learner   TEXT NOT NULL,
    listed_at TEXT NOT NULL,
    PRIMARY KEY (origin, learner)
  );
  CREATE INDEX IF NOT EXISTS runs_by_learner ON runs (learner, graded_at);
  CREATE INDEX IF NOT EXISTS runs_by_learner_stage ON runs (learner, stage, graded_at);
`

/**
 * A store made before `--server` grading (user_version 1) has a CHECK that
 * refuses 'skipped', and one made before checks could be left unjudged
 * (user_version 2) one that refuses 'not-judged': SQLite cannot alter a
 * CHECK, so the table is rebuilt once, keeping every row.
 */
function widenStatusCheck(db: Database.Database): void {
  const sql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'check_results'").pluck().get() as string | undefined
  if (!sql || (sql.includes("'skipped'") && sql.includes("'not-judged'"))) return
  db.transaction(() => {
    db.exec('ALTER TABLE check_results RENAME TO check_results_v1')
    db.exec(SCHEMA)
    db.exec('INSERT INTO check_results SELECT * FROM check_results_v1; DROP TABLE check_results_v1')
  })()
}

/**
 * A store made before the result contract (user_version 4 or less) holds
 * each run's score over every check the run had, regression included: the
 * scores are counted again once, the one way (stageScore), from the checks.
 */
function recountScores(db: Database.Database): void {
  if ((db.pragma('user_version', { simple: true }) as number) >= 5) return
  const runs = db.prepare('SELECT id, stage FROM runs').all() as Array<{ id: number; stage: number }>
  const checks = db.prepare('SELECT stage, points, max_points AS maxPoints FROM check_results WHERE run_id = ?')
  const update = db.prepare('UPDATE runs SET score = ?, max_score = ? WHERE id = ?')
  db.transaction(() => {
    for (const run of runs) {
      const { score, maxScore } = stageScore(run.stage, checks.all(run.id) as Array<{ stage: number; points: number; maxPoints: number }>)
      update.run(score, maxScore, run.id)
    }
  })()
}

export class DuplicateRunError extends Error {}

export class ResultsStore {
  private readonly db: Database.Database

  constructor(readonly path: string = DEFAULT_STORE) {
    mkdirSync(dirname(path), { recursive: true })
    this.db = new Database(path)
    this.db.pragma('busy_timeout = 5000')
    this.db.pragma('foreign_keys = ON')
    widenStatusCheck(this.db)
    this.db.exec(SCHEMA)
    recountScores(this.db)
    this.db.pragma('user_version = 5')
  }

  /** Adds one run with its checks; a run already in the store raises DuplicateRunError. */
  record(run: RunRecord): number {
    const r = run.result
    const insertRun = this.db.prepare(
      `INSERT INTO runs (learner, stage, slug, seed, graded_at, outcome, reason, score, max_score, duration_ms, rerun, origin)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    const insertCheck = this.db.prepare(
      `INSERT INTO check_results (run_id, position, check_id, stage, title, status, points, max_points, message)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    const write = this.db.transaction(() => {
      const { lastInsertRowid } = insertRun.run(
        run.learner,
        r.stage,
        r.slug,
        r.seed,
        run.gradedAt,
        run.outcome,
        run.reason,
        r.score,
        r.maxScore,
        Math.round(r.durationMs),
        r.rerun,
        run.origin,
      )
      const id = Number(lastInsertRowid)
      r.checks.forEach((c, i) => insertCheck.run(id, i, c.id, c.stage, c.title, c.status, c.points, c.maxPoints, c.message))
      return id
    })
    try {
      return write()
    } catch (error) {
      // The UNIQUE constraint decides what a duplicate is; no look-before-insert.
      if ((error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
        throw new DuplicateRunError(`${run.learner}'s stage ${r.stage} run with seed ${r.seed} at ${run.gradedAt} is already in the store`)
      throw error
    }
  }

  /**
   * Each learner's most recent run of each stage (of `stage` only, when
   * given), by learner then stage: a stage's score comes from grading that
   * stage's folder, never from another stage's regression.
   */
  latestRuns(stage?: number): StoredRun[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM runs r
          WHERE (@stage IS NULL OR r.stage = @stage)
            AND r.id = (SELECT id FROM runs WHERE learner = r.learner AND stage = r.stage
                         ORDER BY graded_at DESC, id DESC LIMIT 1)
          ORDER BY learner, stage`,
      )
      .all({ stage: stage ?? null }) as RunRow[]
    const checks = this.db.prepare(
      `SELECT check_id AS id, stage, title, status, points, max_points AS maxPoints, message
         FROM check_results WHERE run_id = ? ORDER BY position`,
    )
    return rows.map((row) => ({
      id: row.id,
      learner: row.learner,
      stage: row.stage,
      slug: row.slug,
      seed: row.seed,
      gradedAt: row.graded_at,
      outcome: row.outcome,
      reason: row.reason,
      score: row.score,
      maxScore: row.max_score,
      durationMs: row.duration_ms,
      rerun: row.rerun,
      origin: row.origin,
      checks: checks.all(row.id) as StoredCheck[],
    }))
  }

  /**
   * The (learner, stage) pairs that runs from `origin` (a roster's folder)
   * finished: graded, or stopped at the time limit. A grader that failed
   * left no grade, and an interrupted grading is never stored: a rerun of
   * the roster grades those, and skips these.
   */
  finishedGradings(origin: string): Array<{ learner: string; stage: number }> {
    return this.db
      .prepare(`SELECT DISTINCT learner, stage FROM runs WHERE origin = ? AND outcome IN ('graded', 'time limit') ORDER BY learner, stage`)
      .all(origin) as Array<{ learner: string; stage: number }>
  }

  /**
   * Records that the roster at `origin` holds these learners, before any of
   * them is graded: one the batch never reaches (interrupted, or a time limit
   * for the whole class) is still one of the class.
   */
  listRoster(origin: string, learners: string[], listedAt = new Date().toISOString()): void {
    const insert = this.db.prepare('INSERT INTO roster_learners (origin, learner, listed_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING')
    this.db.transaction(() => learners.forEach((learner) => insert.run(origin, learner, listedAt)))()
  }

  /** Every learner a graded roster has held, whether or not a run of theirs is stored. */
  rosterLearners(): string[] {
    return this.db.prepare('SELECT DISTINCT learner FROM roster_learners ORDER BY learner').pluck().all() as string[]
  }

  /** How many runs the store holds in all. */
  runCount(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n
  }

  close() {
    this.db.close()
  }
}

type RunRow = {
  id: number
  learner: string
  stage: number
  slug: string
  seed: number
  graded_at: string
  outcome: Outcome
  reason: string
  score: number
  max_score: number
  duration_ms: number
  rerun: string
  origin: string
}

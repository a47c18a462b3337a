// How many random histories a histories check runs when not told. The grader
// starts a few processes per grade where it started dozens, and the time
// that saved buys exploration: a history on the SQLite stages costs about
// 25 ms, so they run 60; one on stage 6 runs on three instances and
// PostgreSQL, about 150 ms, so it runs 30. `--histories N` asks for more.
import type { Stage } from '#harness/course.ts'

export const HISTORIES_DEFAULT = { sqlite: 60, postgres: 30 } as const

/** The default count for the histories check of `stage`. */
export const historiesDefault = (stage: Pick<Stage, 'database'>): number => HISTORIES_DEFAULT[stage.database ?? 'sqlite']

/**
 * Of those, some run at drawn settings (settings.ts), each round on
 * instances of its own: two rounds on the SQLite stages (a process renewed
 * each), one on stage 6 (three).
 */
export const SETTINGS_ROUNDS = { sqlite: 2, postgres: 1 } as const
export const HISTORIES_PER_SETTINGS_ROUND = 5

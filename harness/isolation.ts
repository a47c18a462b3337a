// How far a grade keeps learner code from the grader, decided once per grade,
// strongest first:
//   bwrap: the bubblewrap sandbox (sandbox.ts): its own root, no network,
//          resource limits;
//   user:  no sandbox, but the grader is root: learner code runs as nobody
//          (unprivileged.ts), which may write only its grade's data folder,
//          not the course checkout, the results file nor the results store
//          (root owns them, and they are not writable by others);
//   none:  neither: learner code runs as the grader's own user, and may
//          write whatever the grader may.
// Node's permission model (confinement.ts) holds in "user" and "none" too,
// but a native addon (better-sqlite3) writes past it: it is no isolation.
// A grade reports its level (GradeResult.isolation); the adapters (--format)
// and the CI template (--require-isolation) refuse "none" unless
// IDEM_LAB_ALLOW_UNCONFINED=1 says otherwise.
import { platform } from 'node:os'
import { asRoot, runsAsNobody } from './unprivileged.ts'

export type Isolation = 'bwrap' | 'user' | 'none'

/** The one opt-in, the same name in the grader, the adapters and the CI template. */
export const ALLOW_UNCONFINED = 'IDEM_LAB_ALLOW_UNCONFINED'

/** Whether a root grader can run learner code as nobody here: probed once. */
let userProbed: boolean | undefined

/** The grade's isolation, given whether it runs sandboxed (sandboxPolicy() decides that). */
export function isolationOf(sandboxed: boolean): Isolation {
  if (sandboxed) return 'bwrap'
  // Node itself must be executable by nobody: a node under /root is not.
  userProbed ??= platform() === 'linux' && asRoot() && runsAsNobody(process.execPath)
  return userProbed ? 'user' : 'none'
}

export class UnconfinedError extends Error {}

/**
 * Throws when learner code would run with no isolation and the opt-in is
 * not set: for the graders of other people's code (an autograder platform,
 * the CI template), which must not fall back to it without a word.
 */
export function refuseUnconfined(isolation: Isolation, env: NodeJS.ProcessEnv = process.env): void {
  if (isolation !== 'none' || env[ALLOW_UNCONFINED] === '1') return
  throw new UnconfinedError(
    `refusing to grade: the learner's code would run unconfined (no bubblewrap sandbox, nor another user to run it as, which takes a root grader and setpriv); install bubblewrap (docs/instructors.md), or set ${ALLOW_UNCONFINED}=1 to grade anyway`,
  )
}

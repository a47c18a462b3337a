// Where the learner's own state lives between commands (the hints revealed,
// the language chosen): .lab/ of the course, or LAB_HOME, so that a test (or
// a roster's grader child) keeps a folder of its own and never touches the
// learner's.
import { resolve } from 'node:path'
import { repoRoot } from './paths.ts'

/** The path of `name` in the learner's state folder. */
export const labFile = (name: string): string => resolve(process.env.LAB_HOME ?? resolve(repoRoot, '.lab'), name)

// How one of the course's commands is started from another process (a
// roster's grader children, the bench, the tests): through launch.mjs, as
// package.json's scripts start them, so the command runs from its bundle,
// compiled once per version of its sources.
import { resolve } from 'node:path'
import { repoRoot } from './paths.ts'

export const LAUNCHER = resolve(repoRoot, 'harness/launch.mjs')

/** The argv that runs `entry` (a command's TypeScript file, relative to the course root) with `args`. */
export const commandArgv = (entry: string, args: string[] = []): string[] => [process.execPath, LAUNCHER, entry, ...args]

// npm run grade -- <stage> --roster-list FILE --roster-index I|env: one
// learner of a class, picked by a job's index, so that many machines can each
// grade one (a Kubernetes Indexed Job, a CI matrix: docs/instructors.md,
// "Scaling out: a class of 500"). The list file names one checkout folder per
// line, as `--roster DIR` would find them: the folder's name is the learner's
// id. Blank lines and lines starting with # are skipped, and the index counts
// only the listed folders, from 0 (as JOB_COMPLETION_INDEX and a GitHub
// matrix's job-index count). A relative folder is read from the list file's
// own folder. This file only reads the list and picks the line; grade.ts
// grades the folder as `--dir` does.
import { readFileSync, statSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'

/** `--roster-index env`: the index is this variable's, which a Kubernetes Indexed Job sets in every pod. */
export const JOB_INDEX_VARIABLE = 'JOB_COMPLETION_INDEX'

export class RosterListError extends Error {}

/** One listed checkout: its line in the file (from 1, as an editor numbers it) and its folder as written. */
export type ListedLine = { line: number; folder: string }

export type ListedSubmission = {
  /** Its index among the listed folders, from 0. */
  index: number
  /** How many folders the list names. */
  count: number
  line: number
  /** The folder's name: the learner's id, as a roster's folder name is. */
  learner: string
  /** The folder, absolute. */
  checkout: string
}

/**
 * The folders a list names, in order: each line trimmed; blank lines and
 * `#` comments skipped. Every line is checked here, whichever one is picked,
 * so that every index of a job refuses the same faulty list.
 */
export function parseRosterList(text: string, where: string): ListedLine[] {
  const listed = text.split(/\r?\n/).flatMap((raw, i) => {
    const folder = raw.trim()
    return folder === '' || folder.startsWith('#') ? [] : [{ line: i + 1, folder }]
  })
  if (listed.length === 0)
    throw new RosterListError(`--roster-list ${where}: no checkouts listed in it (one folder per line; blank lines and # comments are skipped)`)
  const url = listed.find((l) => /^[a-z][a-z0-9+.-]*:\/\/|^[^/\s]+@[^/\s]+:/i.test(l.folder))
  if (url) throw new RosterListError(`${where} line ${url.line}: ${url.folder}: a URL; list folders (clone each submission first, one folder per learner)`)
  const seen = new Map<string, number>()
  for (const l of listed) {
    const learner = basename(l.folder)
    if (learner.startsWith('.'))
      throw new RosterListError(`${where} line ${l.line}: ${l.folder}: a folder whose name starts with . names no learner (--roster skips such folders)`)
    const first = seen.get(learner)
    if (first !== undefined)
      throw new RosterListError(`${where} lines ${first} and ${l.line} both name the learner ${learner} (a folder's name is its learner's id)`)
    seen.set(learner, l.line)
  }
  return listed
}

/** `--roster-index`: a whole number ≥ 0, or `env` for JOB_COMPLETION_INDEX's. */
export function parseRosterIndex(spec: string, env: NodeJS.ProcessEnv = process.env): number {
  const fromEnv = spec === 'env'
  const text = fromEnv ? env[JOB_INDEX_VARIABLE] : spec
  if (fromEnv && (text === undefined || text === ''))
    throw new RosterListError(`--roster-index env: ${JOB_INDEX_VARIABLE} is not set (a Kubernetes Indexed Job sets it; elsewhere, set it, or give the index)`)
  if (!/^\d+$/.test(text!) || !Number.isSafeInteger(Number(text)))
    throw new RosterListError(
      fromEnv
        ? `--roster-index env: ${JOB_INDEX_VARIABLE}=${text} is not a whole number ≥ 0`
        : `--roster-index ${spec}: a whole number ≥ 0 (0 is the first listed checkout), or env (${JOB_INDEX_VARIABLE}'s)`,
    )
  return Number(text)
}

/** The checkout at `indexSpec` in the list file `file`, checked to be a folder holding stages/. */
export function listedSubmission(file: string | undefined, indexSpec: string | undefined, env: NodeJS.ProcessEnv = process.env): ListedSubmission {
  if (file === undefined || indexSpec === undefined) throw new RosterListError('--roster-list FILE and --roster-index I (or env) go together')
  const index = parseRosterIndex(indexSpec, env)
  const path = resolve(file)
  const kind = statSync(path, { throwIfNoEntry: false })
  if (!kind) throw new RosterListError(`--roster-list ${file}: no such file`)
  if (kind.isDirectory())
    throw new RosterListError(`--roster-list ${file}: a folder; give a file that lists one checkout folder per line (a folder of checkouts is --roster DIR)`)
  const listed = parseRosterList(readFileSync(path, 'utf8'), file)
  const picked = listed[index]
  if (!picked)
    throw new RosterListError(
      `--roster-index ${index}: ${file} lists ${listed.length} checkout${listed.length === 1 ? '' : 's'}, indexes 0 to ${listed.length - 1}`,
    )
  const checkout = resolve(dirname(path), picked.folder)
  const where = `${file} line ${picked.line}: ${picked.folder}`
  if (!statSync(checkout, { throwIfNoEntry: false })?.isDirectory()) throw new RosterListError(`${where}: no such folder`)
  if (!statSync(join(checkout, 'stages'), { throwIfNoEntry: false })?.isDirectory())
    throw new RosterListError(`${where}: no stages/ folder there; list checkouts of the course`)
  return { index, count: listed.length, line: picked.line, learner: basename(checkout), checkout }
}

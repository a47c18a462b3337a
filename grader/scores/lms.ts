// The score summary as an LMS gradebook imports it: the identity the LMS
// matches a student by, and one numeric column per stage, nothing else (no
// outcome, rerun or check columns, which an import would take for grade
// items). Learners are known to the grader by their folder or repository
// name; an identity map says who each one is in the LMS.
//
// Canvas ("How do I import grades in the Gradebook?", Canvas Instructor
// Guide): the layout of its own gradebook export, which its import reads:
// Student, ID, SIS User ID, SIS Login ID, Section, then one column per
// assignment, and a second row of "Points Possible". A student is matched by
// ID, SIS User ID or SIS Login ID; a column whose name matches no assignment
// creates one, with the points possible of that row. An empty cell changes
// nothing.
//
// Moodle ("Import grades", CSV file, Moodle docs): a column to map users
// from (username, ID number or email address), mapped on the import page to
// the user field of the same name, and one column per grade item, mapped to
// an item or to "new grade item". An empty cell imports nothing.
import { parse } from 'csv-parse/sync'
import { stringify } from 'csv-stringify/sync'
import type { Summary } from './summary.ts'

export const LMSES = ['canvas', 'moodle'] as const
export type Lms = (typeof LMSES)[number]

/** What an identity map's second column holds, named by its header. */
const KINDS = {
  sis_login_id: { canvas: 'SIS Login ID', moodle: undefined },
  sis_user_id: { canvas: 'SIS User ID', moodle: undefined },
  email: { canvas: undefined, moodle: 'email' },
  idnumber: { canvas: undefined, moodle: 'idnumber' },
  username: { canvas: undefined, moodle: 'username' },
} as const satisfies Record<string, Record<Lms, string | undefined>>
export type IdentityKind = keyof typeof KINDS

export class IdentityMapError extends Error {}

export type IdentityMap = { kind: IdentityKind; byLearner: Map<string, string> }

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/**
 * An identity map: CSV with a header row `learner,<kind>`, kind one of
 * sis_login_id, sis_user_id (Canvas), email, idnumber, username (Moodle); one
 * row per learner. A BOM, quoted fields and CRLF are read as a spreadsheet
 * writes them.
 */
export function parseIdentityMap(text: string, file = 'the identity map'): IdentityMap {
  let rows: string[][]
  try {
    rows = parse(text, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: false })
  } catch (error) {
    throw new IdentityMapError(`${file}: not CSV: ${(error as Error).message}`)
  }
  const [header, ...body] = rows
  const kinds = Object.keys(KINDS).join(', ')
  if (header?.length !== 2 || header[0] !== 'learner' || !(header[1]! in KINDS))
    throw new IdentityMapError(`${file}: its first row must be learner,<kind>, kind one of ${kinds}; it is ${header ? header.join(',') : 'empty'}`)
  const kind = header[1] as IdentityKind
  const byLearner = new Map<string, string>()
  const owners = new Map<string, string>()
  for (const [i, [learner, identity]] of body.entries()) {
    const line = `${file}, row ${i + 2}`
    if (!learner || !identity) throw new IdentityMapError(`${line}: a learner and a ${kind}, both non-empty`)
    if (kind === 'email' && !EMAIL.test(identity)) throw new IdentityMapError(`${line}: ${identity} is not an email address`)
    if (byLearner.has(learner)) throw new IdentityMapError(`${line}: ${learner} is mapped twice`)
    const other = owners.get(identity)
    if (other) throw new IdentityMapError(`${line}: ${kind} ${identity} is ${other}'s too: two learners cannot be one student`)
    byLearner.set(learner, identity)
    owners.set(identity, learner)
  }
  return { kind, byLearner }
}

/** The file and the warnings to print (map rows for no learner of the class). */
export type LmsExport = { csv: string; unused: string[] }

/**
 * The gradebook import for `lms`: every learner of the summary, identified
 * through `map`; a learner missing from it is an error that names them all.
 * A stage's cell is its points (the stage's own checks, as the grade result
 * counts them), empty when that stage was not graded for the learner.
 */
export function renderLms(summary: Summary, lms: Lms, map: IdentityMap): LmsExport {
  const column = KINDS[map.kind][lms]
  if (!column) {
    const fits = Object.entries(KINDS)
      .filter(([, by]) => by[lms])
      .map(([k]) => k)
    throw new IdentityMapError(`${lms} does not match students by ${map.kind}: give a map of ${fits.join(' or ')}`)
  }
  const missing = summary.learners.map((l) => l.learner).filter((learner) => !map.byLearner.has(learner))
  if (missing.length) throw new IdentityMapError(`not in the identity map (${missing.length}): ${missing.join(', ')}: add them, nothing was written`)
  const known = new Set(summary.learners.map((l) => l.learner))
  const unused = [...map.byLearner.keys()].filter((learner) => !known.has(learner))
  const items = summary.stages.map((stage) => `idem-lab stage ${stage}`)
  // The most a stage scores, as its grade results say (every result of one stage says the same).
  const maxPoints = summary.stages.map((stage) =>
    Math.max(...summary.learners.flatMap((l) => l.stages.filter((s) => s.stage === stage).map((s) => s.maxPoints))),
  )
  const cells = (learner: (typeof summary.learners)[number]) => summary.stages.map((stage) => learner.stages.find((s) => s.stage === stage)?.points ?? '')
  const rows =
    lms === 'canvas'
      ? [
          ['Student', 'ID', 'SIS User ID', 'SIS Login ID', 'Section', ...items],
          ['Points Possible', '', '', '', '', ...maxPoints],
          ...summary.learners.map((l) => {
            const identity = map.byLearner.get(l.learner)!
            const ids = column === 'SIS User ID' ? [identity, ''] : ['', identity]
            return [l.learner, '', ...ids, '', ...cells(l)]
          }),
        ]
      : [[column, ...items], ...summary.learners.map((l) => [map.byLearner.get(l.learner)!, ...cells(l)])]
  // Identities and folder names are text the LMS's users typed: =… must stay text in a spreadsheet.
  return { csv: stringify(rows, { escape_formulas: true }), unused }
}

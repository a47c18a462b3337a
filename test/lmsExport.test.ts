// `npm run scores -- --lms canvas|moodle --identities FILE --out FILE`: the
// file each gradebook imports, from a store of three learners (results
// written by hand, scores.fixture.ts), through the identity map.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { repoRoot } from '#harness/paths.ts'
import { ResultsStore } from '#grader/roster/store.ts'
import { IdentityMapError, parseIdentityMap, renderLms } from '#grader/scores/lms.ts'
import { summarize } from '#grader/scores/summary.ts'
import { result } from './scores.fixture.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('lms')
afterAll(() => scratch.dispose())

const at = (minute: number) => `2026-12-01T10:${String(minute).padStart(2, '0')}:00.000Z`

/**
 * Three learners: ada passes stages 1 and 2; bo fails one check of stage 2
 * (4 points) and was graded on stage 2 only; cy's folder name is a formula.
 */
function classStore(): string {
  const file = join(scratch.path, `grades-${Math.random().toString(36).slice(2)}.sqlite`)
  const store = new ResultsStore(file)
  const record = (learner: string, minute: number, graded: ReturnType<typeof result>) =>
    store.record({ learner, gradedAt: at(minute), outcome: 'graded', reason: '', origin: 'test', result: graded })
  record('ada', 1, result(1, {}, 1))
  record('ada', 2, result(2, {}, 2))
  record('bo', 3, result(3, { reserialized: 'fail' }, 2))
  record('=cy', 4, result(4, { 'payload-changed': 'fail', reserialized: 'fail' }, 2))
  store.close()
  return file
}

const summaryOf = (file: string) => {
  const store = new ResultsStore(file)
  try {
    return summarize(store.latestRuns())
  } finally {
    store.close()
  }
}

const write = (name: string, text: string) => {
  const file = join(scratch.path, name)
  writeFileSync(file, text)
  return file
}

function scores(...args: string[]) {
  const r = spawnSync('npm', ['run', '--silent', 'scores', '--', ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

describe('the identity map', () => {
  it('reads a header learner,<kind>, a BOM, quoted fields and CRLF', () => {
    const map = parseIdentityMap('\ufefflearner,sis_login_id\r\n"ada",a.lovelace\r\nbo,"b,o"\r\n\r\n')
    expect(map.kind).toBe('sis_login_id')
    expect([...map.byLearner]).toEqual([
      ['ada', 'a.lovelace'],
      ['bo', 'b,o'],
    ])
  })

  it('refuses an unknown kind, a learner twice, one identity for two learners, an empty cell and a malformed email', () => {
    const refused: Array<[string, RegExp]> = [
      ['learner,student_number\nada,1\n', /first row must be learner,<kind>, kind one of sis_login_id, sis_user_id, email, idnumber, username/],
      ['learner,idnumber\nada,1\nada,2\n', /row 3: ada is mapped twice/],
      ['learner,idnumber\nada,1\nbo,1\n', /row 3: idnumber 1 is ada's too/],
      ['learner,idnumber\nada,\n', /row 2: a learner and a idnumber, both non-empty/],
      ['learner,email\nada,ada.example.org\n', /row 2: ada\.example\.org is not an email address/],
      ['learner,email\nada,"a\n', /not CSV/],
    ]
    for (const [text, says] of refused) expect(() => parseIdentityMap(text), text).toThrow(says)
  })
})

describe('the file each LMS imports', () => {
  const file = classStore()

  it('Canvas: its export layout, a Points Possible row, the SIS Login ID, one numeric column per stage, empty where not graded', () => {
    const map = parseIdentityMap('learner,sis_login_id\nada,ada01\nbo,bo02\n=cy,cy03\n')
    const { csv, unused } = renderLms(summaryOf(file), 'canvas', map)
    // Best first (the summary's order); ada's stage 2 is 10 of 10 and bo's 6; cy's name stays text ('=…).
    expect(csv).toBe(
      [
        'Student,ID,SIS User ID,SIS Login ID,Section,idem-lab stage 1,idem-lab stage 2',
        'Points Possible,,,,,12,10',
        'ada,,,ada01,,12,10',
        'bo,,,bo02,,,6',
        "'=cy,,,cy03,,,0",
        '',
      ].join('\n'),
    )
    expect(unused).toEqual([])
  })

  it('Canvas by SIS User ID fills that column instead', () => {
    const { csv } = renderLms(summaryOf(file), 'canvas', parseIdentityMap('learner,sis_user_id\nada,1001\nbo,1002\n=cy,1003\n'))
    expect(csv.split('\n')[2]).toBe('ada,,1001,,,12,10')
  })

  it('Moodle: the user field it maps from, then one numeric column per stage; no other column', () => {
    const map = parseIdentityMap('learner,email\nada,ada@uni.example\nbo,bo@uni.example\n=cy,cy@uni.example\nzed,zed@uni.example\n')
    const { csv, unused } = renderLms(summaryOf(file), 'moodle', map)
    expect(csv).toBe(['email,idem-lab stage 1,idem-lab stage 2', 'ada@uni.example,12,10', 'bo@uni.example,,6', 'cy@uni.example,,0', ''].join('\n'))
    expect(unused).toEqual(['zed'])
  })

  it('a learner missing from the map is an error that names every one; a kind the LMS cannot match by, too', () => {
    const partial = parseIdentityMap('learner,email\nbo,bo@uni.example\n')
    expect(() => renderLms(summaryOf(file), 'moodle', partial)).toThrow(IdentityMapError)
    expect(() => renderLms(summaryOf(file), 'moodle', partial)).toThrow('not in the identity map (2): ada, =cy: add them, nothing was written')
    const email = parseIdentityMap('learner,email\nada,a@x.example\nbo,b@x.example\n=cy,c@x.example\n')
    expect(() => renderLms(summaryOf(file), 'canvas', email)).toThrow('canvas does not match students by email: give a map of sis_login_id or sis_user_id')
  })
})

describe('npm run scores -- --lms', () => {
  const file = classStore()

  it('writes the file, and warns of map rows for no learner of the class', () => {
    const ids = write('moodle-ids.csv', 'learner,idnumber\nada,S1\nbo,S2\n=cy,S3\nzed,S9\n')
    const out = join(scratch.path, 'moodle.csv')
    const run = scores('--store', file, '--lms', 'moodle', '--identities', ids, '--out', out)
    expect(run.code, run.err).toBe(0)
    expect(run.out).toContain(`moodle gradebook import written to ${out} (3 learners, 2 stage column(s))`)
    expect(run.err).toContain(`${ids}: zed is no learner of this class (no run, not in a roster): left out`)
    expect(readFileSync(out, 'utf8')).toBe('idnumber,idem-lab stage 1,idem-lab stage 2\nS1,12,10\nS2,,6\nS3,,0\n')
  })

  it('exits 2 and writes nothing when a learner is missing, or --lms comes without --identities and --out', () => {
    const ids = write('canvas-ids.csv', 'learner,sis_login_id\nada,ada01\n')
    const out = join(scratch.path, 'canvas.csv')
    const missing = scores('--store', file, '--lms', 'canvas', '--identities', ids, '--out', out)
    expect([missing.code, missing.err.trim()]).toEqual([2, 'not in the identity map (2): bo, =cy: add them, nothing was written'])
    expect(existsSync(out)).toBe(false)
    const alone = scores('--store', file, '--lms', 'canvas')
    expect([alone.code, alone.err.trim()]).toEqual([2, '--lms, --identities and --out go together'])
    const unknown = scores('--store', file, '--lms', 'blackboard', '--identities', ids, '--out', out)
    expect([unknown.code, unknown.err.trim()]).toEqual([2, '--lms blackboard: one of canvas, moodle'])
  })
})

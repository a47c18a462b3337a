// The roster list that `npm run grade -- N --roster-list FILE --roster-index I`
// reads (grader/roster/rosterList.ts): which line an index picks, and every
// way a list, an index or a listed folder can be wrong, each one error.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { JOB_INDEX_VARIABLE, listedSubmission, parseRosterIndex, parseRosterList } from '#grader/roster/rosterList.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('roster-list')
afterAll(() => scratch.dispose())

describe('parseRosterList', () => {
  it('lists the folders in order, trimmed, with their line numbers; blank lines and # comments do not count', () => {
    const text = '# our class\r\n\r\n/submissions/alice\n   \n  bob/  \n# chen left\nclass/dana\n'
    expect(parseRosterList(text, 'list.txt')).toEqual([
      { line: 3, folder: '/submissions/alice' },
      { line: 5, folder: 'bob/' },
      { line: 7, folder: 'class/dana' },
    ])
  })

  it.for([
    ['', /--roster-list list\.txt: no checkouts listed in it/],
    ['# only comments\n\n', /no checkouts listed in it \(one folder per line; blank lines and # comments are skipped\)/],
    ['alice\nhttps://github.com/our-class/lab-bob\n', /^list\.txt line 2: https:\/\/github\.com\/our-class\/lab-bob: a URL; list folders/],
    ['git@github.com:our-class/lab-bob.git\n', /^list\.txt line 1: git@github\.com:our-class\/lab-bob\.git: a URL/],
    ['a/alice\nbob\nb/alice\n', /^list\.txt lines 1 and 3 both name the learner alice/],
    ['alice\nclass/.hidden\n', /^list\.txt line 2: class\/\.hidden: a folder whose name starts with \. names no learner/],
    ['alice\n..\n', /^list\.txt line 2: \.\.: a folder whose name starts with \./],
  ] as const)('refuses %j', ([text, says]) => {
    expect(() => parseRosterList(text, 'list.txt')).toThrow(says)
  })
})

describe('parseRosterIndex', () => {
  it('takes a whole number from 0, or JOB_COMPLETION_INDEX with env', () => {
    expect(parseRosterIndex('0', {})).toBe(0)
    expect(parseRosterIndex('12', {})).toBe(12)
    expect(parseRosterIndex('env', { [JOB_INDEX_VARIABLE]: '7' })).toBe(7)
  })

  it.for([
    ['-1', {}, /--roster-index -1: a whole number ≥ 0 \(0 is the first listed checkout\), or env \(JOB_COMPLETION_INDEX's\)/],
    ['1.5', {}, /--roster-index 1\.5: a whole number ≥ 0/],
    ['one', {}, /--roster-index one: a whole number ≥ 0/],
    ['', {}, /--roster-index : a whole number ≥ 0/],
    ['99999999999999999999', {}, /a whole number ≥ 0/],
    ['env', {}, /--roster-index env: JOB_COMPLETION_INDEX is not set \(a Kubernetes Indexed Job sets it/],
    ['env', { [JOB_INDEX_VARIABLE]: '' }, /JOB_COMPLETION_INDEX is not set/],
    ['env', { [JOB_INDEX_VARIABLE]: 'x1' }, /--roster-index env: JOB_COMPLETION_INDEX=x1 is not a whole number ≥ 0/],
  ] as const)('refuses %j with %j', ([spec, env, says]) => {
    expect(() => parseRosterIndex(spec, env)).toThrow(says)
  })
})

describe('listedSubmission', () => {
  const root = join(scratch.path, 'class')
  for (const learner of ['alice', 'bob']) mkdirSync(join(root, learner, 'stages'), { recursive: true })
  mkdirSync(join(root, 'nostages'), { recursive: true })
  const list = join(root, 'roster.txt')
  // Relative folders are read from the list's folder; an absolute one as it is.
  writeFileSync(list, `# stage 3\nalice\n\n${join(root, 'bob')}\nnostages\nmissing\n`)

  it('picks the folder at the index, counting listed folders only: its learner is the folder name', () => {
    expect(listedSubmission(list, '0', {})).toEqual({ index: 0, count: 4, line: 2, learner: 'alice', checkout: join(root, 'alice') })
    expect(listedSubmission(list, 'env', { [JOB_INDEX_VARIABLE]: '1' })).toEqual({
      index: 1,
      count: 4,
      line: 4,
      learner: 'bob',
      checkout: join(root, 'bob'),
    })
  })

  it.for([
    [list, '4', /^--roster-index 4: .*roster\.txt lists 4 checkouts, indexes 0 to 3$/],
    [list, '2', /roster\.txt line 5: nostages: no stages\/ folder there; list checkouts of the course$/],
    [list, '3', /roster\.txt line 6: missing: no such folder$/],
    [join(root, 'nothing.txt'), '0', /^--roster-list .*nothing\.txt: no such file$/],
    [root, '0', /^--roster-list .*class: a folder; give a file that lists one checkout folder per line \(a folder of checkouts is --roster DIR\)$/],
    [list, undefined, /^--roster-list FILE and --roster-index I \(or env\) go together$/],
    [undefined, '0', /go together/],
  ] as const)('%s at %s: one error', ([file, index, says]) => {
    expect(() => listedSubmission(file, index, {})).toThrow(says)
  })
})

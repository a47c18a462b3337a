// npm run reset -- N, on a copy of the course that is its own git repository
// (never this checkout): it restores exactly the starter of the files a
// learner edits in the stage's folder, from the git history even when the
// learner committed their own code over it, refuses without --yes when stdin
// is no terminal, and touches nothing outside the stage's learner files: not
// another stage, not the README, not a file the learner added, not what a
// link points to, not git's index.
import { execFile, execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { course, stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { knownStarterDigest, starterDigest } from '#harness/starterHashes.ts'
import { applyReset, planReset, ResetError } from '#grader/cli/starterRestore.ts'
import { closedBookCopy } from './helpers/courseCopy.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('reset')
afterAll(() => scratch.dispose())

const stage0 = stageByNumber(0)
const stage1 = stageByNumber(1)
const learnerFile = `stages/${stage0.folder}/${stage0.edits[0]}`

const git = (root: string, ...args: string[]) =>
  execFileSync('git', ['-C', root, '-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })

/** Every learner file of the course as this checkout's HEAD has it: the starters (test/starters.test.ts keeps the digests equal). */
const starters = new Map(
  course.stages.flatMap((s) =>
    s.edits.map((file) => {
      const path = `stages/${s.folder}/${file}`
      return [path, execFileSync('git', ['-C', repoRoot, 'show', `HEAD:./${path}`])] as const
    }),
  ),
)

/** path → sha256 of every file under `root` but .git and .lab (links as their target's path). */
function snapshot(root: string, dir = root): Map<string, string> {
  const files = new Map<string, string>()
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    const rel = relative(root, path)
    if (rel === '.git' || rel === '.lab' || rel === 'node_modules') continue
    if (entry.isSymbolicLink()) files.set(rel, `link:${readFileSync(path).length}`)
    else if (entry.isDirectory()) for (const [k, v] of snapshot(root, path)) files.set(k, v)
    else files.set(rel, createHash('sha256').update(readFileSync(path)).digest('hex'))
  }
  return files
}

/** The paths whose content differs between two snapshots. */
const changed = (a: Map<string, string>, b: Map<string, string>) => [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k)).sort()

let course_: string

beforeAll(() => {
  // The course as git sees it, each learner file set to its starter, committed; then a learner's commit over stage 0's file.
  course_ = closedBookCopy(join(scratch.path, 'course'))
  for (const [path, text] of starters) writeFileSync(join(course_, path), text)
  git(course_, 'init', '-q')
  git(course_, 'add', '-A')
  git(course_, 'commit', '-q', '-m', 'the course')
  writeFileSync(join(course_, learnerFile), 'export const mine = "committed"\n')
  git(course_, 'commit', '-q', '-am', "the learner's work")
}, 120_000)

/** The learner's state before each reset: stage 0's file edited again, a file added, its README annotated, stage 1 edited, a file outside. */
function learnerEdits() {
  writeFileSync(join(course_, learnerFile), 'export const mine = "uncommitted"\n')
  writeFileSync(join(course_, 'stages', stage0.folder, 'notes.ts'), '// my notes\n')
  writeFileSync(join(course_, 'stages', stage0.folder, 'README.md'), `${readFileSync(join(repoRoot, 'stages', stage0.folder, 'README.md'), 'utf8')}\nmy note\n`)
  writeFileSync(join(course_, 'stages', stage1.folder, stage1.edits[0]!), '// stage 1, mine\n')
  writeFileSync(join(course_, 'outside.txt'), 'not the stage\n')
}

/** npm run reset in the copy, as a learner types it there, stdin not a terminal. */
function reset(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(
      process.execPath,
      [join(course_, 'harness', 'launch.mjs'), 'grader/cli/reset.ts', ...args],
      { cwd: course_, env: { ...process.env, FORCE_COLOR: '0', LC_ALL: 'C', LAB_HOME: join(scratch.path, 'home') }, timeout: 120_000 },
      (error, stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    ),
  )
}

describe('npm run reset, the command', () => {
  it('without a terminal and without --yes: refuses in one line, exit 2, and changes nothing', { timeout: 150_000 }, async () => {
    learnerEdits()
    const before = snapshot(course_)
    const r = await reset(['0'])
    expect(r.code, r.stdout + r.stderr).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr.trim().split('\n')).toEqual([
      `nothing restored: there is no terminal to confirm on; npm run reset -- 0 --yes overwrites ${learnerFile} with the starter`,
    ])
    expect(changed(before, snapshot(course_))).toEqual([])
  })

  it("--yes: lists the files, restores exactly their starter from before the learner's commit, and nothing else", { timeout: 150_000 }, async () => {
    learnerEdits()
    const before = snapshot(course_)
    const r = await reset(['0', '--yes'])
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toContain(`stage 0 (unprotected): these files in stages/${stage0.folder} will be overwritten with the starter`)
    expect(r.stdout).toContain(`  ${learnerFile}\n`)
    expect(r.stdout).toContain('stage 0: 1 file(s) restored to the starter; grade it: npm run grade -- 0')
    expect(changed(before, snapshot(course_))).toEqual([learnerFile])
    expect(readFileSync(join(course_, learnerFile))).toEqual(starters.get(learnerFile))
    // git's index is the learner's as it was: the file is modified against their commit, nothing staged.
    expect(git(course_, 'diff', '--cached', '--name-only')).toBe('')
    expect(git(course_, 'status', '--porcelain', '--', learnerFile).trim()).toBe(`M ${learnerFile}`)
    // Once more: nothing differs, nothing asked.
    const again = await reset(['0'])
    expect(again.code).toBe(0)
    expect(again.stdout.trim()).toBe(`stage 0 (unprotected): the files you edit in stages/${stage0.folder} are the starter already; nothing to restore`)
  })
})

describe('planReset and applyReset', () => {
  it('a file missing is written anew, a file already the starter is left alone', () => {
    const stage = stage1
    for (const file of stage.edits) writeFileSync(join(course_, 'stages', stage.folder, file), starters.get(`stages/${stage.folder}/${file}`)!)
    rmSync(join(course_, 'stages', stage.folder, stage.edits[0]!))
    const plan = planReset(stage, course_)
    expect(plan.files.map((f) => [f.path, f.state])).toEqual(stage.edits.map((file, i) => [`stages/${stage.folder}/${file}`, i === 0 ? 'missing' : 'same']))
    expect(applyReset(plan, course_)).toEqual([`stages/${stage.folder}/${stage.edits[0]}`])
    for (const file of stage.edits) {
      const path = `stages/${stage.folder}/${file}`
      expect(starterDigest(readFileSync(join(course_, path), 'utf8')), path).toBe(knownStarterDigest(path))
    }
  })

  it('a learner file that is a link is replaced by the starter itself; what it pointed at is not written', () => {
    const target = join(course_, 'outside.txt')
    writeFileSync(target, 'not the stage\n')
    rmSync(join(course_, learnerFile))
    symlinkSync(target, join(course_, learnerFile))
    const plan = planReset(stage0, course_)
    expect(plan.files.map((f) => f.state)).toEqual(['changed'])
    applyReset(plan, course_)
    expect(readFileSync(target, 'utf8')).toBe('not the stage\n')
    expect(readFileSync(join(course_, learnerFile))).toEqual(starters.get(learnerFile))
  })

  it('a checkout without git history, or whose history lacks the starter, restores nothing and says why', () => {
    const bare = join(scratch.path, 'no-git')
    mkdirSync(join(bare, 'stages', stage0.folder), { recursive: true })
    writeFileSync(join(bare, learnerFile), '// mine\n')
    expect(() => planReset(stage0, bare)).toThrow(ResetError)
    try {
      planReset(stage0, bare)
    } catch (error) {
      expect((error as ResetError).problem.kind).toBe('noHistory')
    }
    // A repository whose only commit is the learner's own code.
    git(bare, 'init', '-q')
    git(bare, 'add', '-A')
    git(bare, 'commit', '-q', '-m', 'mine only')
    expect(() => planReset(stage0, bare)).toThrow(expect.objectContaining({ problem: { kind: 'notInHistory', path: learnerFile } }))
    expect(readFileSync(join(bare, learnerFile), 'utf8')).toBe('// mine\n')
  })

  it('a stage folder that is a link is refused before anything is read or written', () => {
    const linked = join(scratch.path, 'linked')
    mkdirSync(join(linked, 'stages'), { recursive: true })
    mkdirSync(join(scratch.path, 'elsewhere'), { recursive: true })
    symlinkSync(join(scratch.path, 'elsewhere'), join(linked, 'stages', stage0.folder))
    expect(() => planReset(stage0, linked)).toThrow(expect.objectContaining({ problem: { kind: 'link', path: `stages/${stage0.folder}` } }))
    expect(readdirSync(join(scratch.path, 'elsewhere'))).toEqual([])
  })
})

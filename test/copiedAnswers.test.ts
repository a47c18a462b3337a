// A learner file that loads the reference solution scores 0 for its stage,
// with a message naming the file: by the #solutions/ alias, by a relative
// path, by a path computed at run time (Node's permission model stops that
// one), by a symbolic link, by import()/require() with a literal, or by
// re-exporting the given/ piece that is the stage's own answer.
import { spawn } from 'node:child_process'
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { confinementArgs } from '#harness/confinement.ts'
import { deniedSolutionRead, findCopiedAnswers } from '#grader/policing/copiedAnswers.ts'
import { stageByNumber } from '#harness/course.ts'
import { repoRoot } from '#harness/paths.ts'
import { checkoutWith } from './helpers/checkout.ts'
import { gradeIn, scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('copied')
afterAll(() => scratch.dispose())

/** A checkout holding one learner file of one stage. */
const checkout = (name: string, stage: number, file: string, text: string) => checkoutWith(scratch.path, name, stage, file, text)

const MESSAGE = 'stages/05-scope-ttl/idempotency.ts imports the reference solution'

describe('grading a checkout that copies the answer', () => {
  // The checkout's folder sits four levels below the overlay the grader runs
  // it from (.lab/work/run-*/05-scope-ttl): enough ../ to reach solutions/.
  const cheats = [
    { name: 're-export', text: "// TODO\nexport { createLayer } from '#solutions/05-scope-ttl/idempotency.ts'\n", message: MESSAGE },
    { name: 'relative-path', text: "// TODO\nexport { createLayer } from '../../../../solutions/05-scope-ttl/idempotency.ts'\n", message: MESSAGE },
    {
      name: 'computed-path',
      // No literal names solutions/: only the permission model can stop this.
      text: [
        '// TODO',
        "import { fileURLToPath } from 'node:url'",
        "const root = fileURLToPath(import.meta.url).split('/.lab/')[0]",
        "const parts = [root, ['sol', 'utions'].join(''), '05-scope-ttl', 'idempotency.ts']",
        "export const { createLayer } = await import(parts.join('/'))",
        '',
      ].join('\n'),
      // Whether its server is stopped by the denied read or, on a loaded
      // machine, by the start-up limit first, it scores 0; the message of the
      // denied read is tested on its own below, without a time limit.
      message: '',
    },
  ]

  it.for(cheats)('the $name cheat scores 0 for stage 5, every check saying why', async (cheat) => {
    const dir = checkout(cheat.name, 5, 'idempotency.ts', cheat.text)
    const result = await gradeIn(scratch.path, { stage: 5, seed: 1, source: { kind: 'dir', path: dir } })
    expect(result.score).toBe(0)
    expect(result.checks.length).toBeGreaterThan(0)
    for (const c of result.checks) expect(c.message, c.id).toContain(cheat.message)
  })

  it("a computed path is denied by Node's permission model, and reported as a copied answer", async () => {
    // Where the grader runs a checkout's folder from (.lab/work/…), which the cheat's path arithmetic expects.
    const overlay = join(repoRoot, '.lab', 'work', `computed-${process.pid}`)
    const folder = join(overlay, stageByNumber(5).folder)
    mkdirSync(folder, { recursive: true })
    writeFileSync(join(folder, 'idempotency.ts'), cheats[2]!.text)
    const own = join(scratch.path, 'computed-direct-tmp')
    mkdirSync(own)
    const { code, log } = await new Promise<{ code: number | null; log: string }>((done) => {
      const args = [
        ...confinementArgs({ stage: 5, readable: [folder], writable: [own], cwd: folder, tsx: true }),
        '--import',
        'tsx',
        join(folder, 'idempotency.ts'),
      ]
      const child = spawn(process.execPath, args, { cwd: folder, env: { PATH: process.env.PATH ?? '', TMPDIR: own } })
      let text = ''
      child.stderr.on('data', (c: Buffer) => (text += c))
      child.on('close', (c) => done({ code: c, log: text }))
    })
    rmSync(overlay, { recursive: true, force: true })
    expect(code, log).not.toBe(0)
    expect(String(deniedSolutionRead('stages/05-scope-ttl', log)), log).toBe(
      'stages/05-scope-ttl imports the reference solution (at run time it tried to read solutions/05-scope-ttl/idempotency.ts, which the grader does not let it read)',
    )
  })
})

describe('the static scan (before any server starts)', () => {
  const stage5 = stageByNumber(5)
  const scan = (name: string, stage: number, file: string, text: string) => {
    const dir = checkout(name, stage, file, text)
    const folder = join(dir, 'stages', stageByNumber(stage).folder)
    return findCopiedAnswers({ stage, dir: folder, shownAs: `stages/${stageByNumber(stage).folder}`, checkout: dir })
  }

  it('refuses import() and require() with a literal', () => {
    expect(scan('dynamic', 5, 'idempotency.ts', "export const m = await import('#solutions/05-scope-ttl/idempotency.ts')\n")).toHaveLength(1)
    const absolute = resolve(repoRoot, 'solutions/05-scope-ttl/keyStore.ts')
    expect(
      scan(
        'require',
        5,
        'idempotency.ts',
        `const require = (await import('node:module')).createRequire(import.meta.url)\nexport const m = require('${absolute}')\n`,
      ),
    ).toHaveLength(1)
  })

  it('refuses a learner file that is a link into solutions/', () => {
    const dir = join(scratch.path, 'link', 'stages', stage5.folder)
    mkdirSync(dir, { recursive: true })
    symlinkSync(resolve(repoRoot, 'solutions', stage5.folder, 'idempotency.ts'), join(dir, 'idempotency.ts'))
    const refusals = findCopiedAnswers({ stage: 5, dir, shownAs: `stages/${stage5.folder}` })
    expect(refusals.map((r) => `${r.file} ${r.reason}`)).toEqual([
      `stages/${stage5.folder}/idempotency.ts is a link into solutions/ or given/: it imports the reference solution`,
    ])
  })

  it("refuses a stage's own answer taken from given/, and allows earlier stages' pieces", () => {
    const own = scan('own-given', 2, 'canonicalize.ts', "export { canonicalize } from '#given/02-fingerprint/canonicalize.ts'\n")
    expect(own.map((r) => String(r.reason))).toEqual([
      "imports the reference solution (given/02-fingerprint/canonicalize.ts is stage 2's answer; stage 2 may use given/ of earlier stages only)",
    ])
    expect(scan('earlier-given', 3, 'idempotency.ts', "export { canonicalize } from '#given/02-fingerprint/canonicalize.ts'\n")).toEqual([])
  })

  it('finds nothing in the starters and the solutions', () => {
    for (const root of ['stages', 'solutions'])
      for (const n of [0, 1, 2, 3, 4, 5]) {
        const s = stageByNumber(n)
        expect(findCopiedAnswers({ stage: n, dir: resolve(repoRoot, root, s.folder), shownAs: `${root}/${s.folder}` }), `${root}/${s.folder}`).toEqual([])
      }
  })
})

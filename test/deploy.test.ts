// Grading past one machine (docs/instructors.md, "Scaling out: a class of
// 500"): the grader image's command, run as a Kubernetes Indexed Job's pod runs
// it, grades the listed learner its JOB_COMPLETION_INDEX picks and leaves a v1
// result that `npm run scores:import` takes. Neither the image nor the Job can
// run here (no Docker, no cluster): their files' text is checked instead,
// against the command that did run.
import { execFile, spawnSync } from 'node:child_process'
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { Ajv2020 } from 'ajv/dist/2020.js'
import Database from 'better-sqlite3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commandArgv } from '#harness/commands.ts'
import { stageByNumber } from '#harness/course.ts'
import { findExecutable } from '#harness/executables.ts'
import { repoRoot } from '#harness/paths.ts'
import { JOB_INDEX_VARIABLE, parseRosterList } from '#grader/roster/rosterList.ts'
import type { GradeResult } from '#grader/engine/gradeResult.ts'
import { checkoutWith } from './helpers/checkout.ts'
import { runCliDirectly } from './helpers/cli.ts'
import { scratchDir } from './helpers/scratch.ts'

const scratch = scratchDir('deploy')
afterAll(() => scratch.disposeExpectingNoneLeft('processes left running by the entry point'))

const run = promisify(execFile)
const LIMIT_MS = 240_000
const read = (file: string) => readFileSync(resolve(repoRoot, file), 'utf8')
const schema = JSON.parse(read('docs/grade-result.schema.json'))
const validate = new Ajv2020({ allErrors: true, validateFormats: false }).compile(schema)

/** The image's command, as the Dockerfile's exec-form CMD names it. */
const dockerfile = read('Dockerfile')
const cmd = JSON.parse(dockerfile.match(/^CMD (\[.*\])$/m)?.[1] ?? 'null') as string[] | null

/** The variables the entry point insists on, as its own check lists them. */
const required =
  read('deploy/grade-index.sh')
    .match(/^for name in ([A-Z_ ]+); do$/m)?.[1]
    ?.split(' ') ?? []

const stage0 = stageByNumber(0)
const solution0 = read(join('solutions', stage0.folder, 'suspectedDuplicates.ts'))

/** The image's command in the course checkout, with a pod's environment; never throws. */
async function entryPoint(env: Record<string, string>) {
  const r = await run(cmd![0]!, cmd!.slice(1), {
    cwd: repoRoot,
    // TMPDIR: the servers carry the scratch folder, so the afterAll sees any left running. LAB_HOME: not the course's .lab/.
    env: { PATH: process.env.PATH!, TMPDIR: scratch.path, LAB_HOME: join(scratch.path, 'lab-home'), FORCE_COLOR: '0', LC_ALL: 'C', ...env },
    timeout: LIMIT_MS,
  }).then(
    (done) => ({ code: 0, ...done }),
    (failed) => ({ code: failed.code as number, stdout: failed.stdout as string, stderr: failed.stderr as string }),
  )
  return r
}

describe('the entry point: one learner of a roster list, by JOB_COMPLETION_INDEX', () => {
  const classDir = join(scratch.path, 'class')
  const list = join(classDir, 'roster.txt')
  const results = join(scratch.path, 'results')
  let pod: Record<string, string>
  beforeAll(() => {
    // alice and chen solved stage 0; bob left the starter's query, which misses some copies.
    checkoutWith(classDir, 'alice', 0, 'suspectedDuplicates.ts', solution0)
    mkdirSync(join(classDir, 'bob', 'stages', stage0.folder), { recursive: true })
    checkoutWith(classDir, 'chen', 0, 'suspectedDuplicates.ts', solution0)
    writeFileSync(list, '# our class, stage 0\n\nalice\n  bob  \n# dana left\nchen\n')
    pod = { IDEM_LAB_STAGE: '0', IDEM_LAB_SEED: '4242', IDEM_LAB_ROSTER_LIST: list, IDEM_LAB_RESULTS: results }
  })

  it('grades line 1 (bob), writes results/1.json, a valid v1 result stamped with bob, which scores:import takes', { timeout: LIMIT_MS }, async () => {
    const r = await entryPoint({ ...pod, [JOB_INDEX_VARIABLE]: '1' })
    // Bob fails a check (the grader exits 1): still a grade, so the pod succeeds.
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toContain(`${list}: index 1 of 3 (line 4), learner bob`)
    const result = JSON.parse(readFileSync(join(results, '1.json'), 'utf8')) as GradeResult & { learner: string; gradedAt: string }
    expect(validate(result) ? [] : validate.errors).toEqual([])
    expect(result).toMatchObject({ learner: 'bob', stage: 0, seed: 4242, gradable: true, maxScore: stage0.points })
    expect(result.score).toBeLessThan(stage0.points)
    expect(['bwrap', 'user']).toContain(result.isolation)
    expect(Date.parse(result.gradedAt)).toBeGreaterThan(Date.now() - LIMIT_MS)
    expect(result.rerun).toContain(`--dir ${join(classDir, 'bob')}`)

    const store = join(scratch.path, 'grades.sqlite')
    const [node, ...importArgs] = commandArgv('grader/roster/import.ts', ['--store', store, results])
    const imported = spawnSync(node!, importArgs, { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, FORCE_COLOR: '0' } })
    expect(imported.status, imported.stdout + imported.stderr).toBe(0)
    expect(imported.stdout).toContain(`+ bob: stage 0, ${result.score}/${stage0.points}, seed 4242`)
    expect(imported.stdout).toContain('1 imported, 0 already there, 0 refused')
    const db = new Database(store, { readonly: true })
    expect(db.prepare('SELECT learner, stage, seed, score, graded_at AS gradedAt FROM runs').all()).toEqual([
      { learner: 'bob', stage: 0, seed: 4242, score: result.score, gradedAt: result.gradedAt },
    ])
    db.close()
  })

  it('an index past the list, an unset index or setting: one line, exit 2, no result', { timeout: LIMIT_MS }, async () => {
    const past = await entryPoint({ ...pod, [JOB_INDEX_VARIABLE]: '3' })
    expect([past.code, past.stderr.trim().split('\n')]).toEqual([
      2,
      [`--roster-index 3: ${list} lists 3 checkouts, indexes 0 to 2`, 'grade-index: no result for index 3 (the grader exited with code 2)'],
    ])
    expect(existsSync(join(results, '3.json'))).toBe(false)
    const unset = await entryPoint(pod)
    expect([unset.code, unset.stderr]).toEqual([2, expect.stringContaining('--roster-index env: JOB_COMPLETION_INDEX is not set')])
    const { IDEM_LAB_SEED: _, ...noSeed } = pod
    const seedless = await entryPoint({ ...noSeed, [JOB_INDEX_VARIABLE]: '0' })
    expect([seedless.code, seedless.stderr]).toEqual([2, 'grade-index: IDEM_LAB_SEED is not set (docs/instructors.md, "Scaling out: a class of 500")\n'])
  })

  it.concurrent.for([
    [
      ['0', '--roster-list', 'roster.txt', '--roster-index', '0', '--solution'],
      /--roster-list grades one stage of one checkout: it needs a stage, and excludes all/,
    ],
    [['0', '--roster-list', 'roster.txt', '--roster-index', '0', '--format', 'gradescope', '--json', 'x.json'], /excludes all, --roster, --dir/],
    [['all', '--roster-list', 'roster.txt', '--roster-index', '0'], /it needs a stage/],
  ] as const)('npm run grade -- %j: refused, exit 2', { timeout: LIMIT_MS }, async ([args, says], { expect }) => {
    const r = await runCliDirectly(
      args.map((a) => (a === 'roster.txt' ? list : a)),
      scratch.path,
    )
    expect(r.code, r.stdout + r.stderr).toBe(2)
    expect(r.stderr).toMatch(says)
  })
})

describe('the Dockerfile (not built here: its text)', () => {
  it('is the official Debian node:20 image with bubblewrap, the locked dependencies, and the tested entry point as CMD', () => {
    expect(dockerfile).toMatch(/^FROM node:20-bookworm-slim$/m)
    expect(dockerfile).toMatch(/apt-get install -y --no-install-recommends bubblewrap util-linux/)
    expect(dockerfile).toMatch(/^COPY package\.json package-lock\.json \.\/$/m)
    expect(dockerfile).toMatch(/^RUN npm ci\b/m)
    expect(cmd).toEqual(['deploy/grade-index.sh'])
    accessSync(resolve(repoRoot, cmd![0]!), constants.X_OK)
    // Root: without the sandbox, only a root grader can run the learner's code as another user.
    expect(dockerfile).not.toMatch(/^USER /m)
    expect(read('.dockerignore').split('\n')).toEqual(expect.arrayContaining(['node_modules', '.lab', '.git', 'solutions', 'results']))
  })
})

// PyYAML where there is one (no YAML parser among the course's dependencies).
const yamlParse = (text: string) =>
  spawnSync('python3', ['-c', 'import sys, json, yaml; json.dump(list(yaml.safe_load_all(sys.stdin)), sys.stdout)'], { input: text, encoding: 'utf8' })
const yaml = findExecutable('python3') ? yamlParse('a: 1').status === 0 : false

describe.skipIf(!yaml)('the Kubernetes Jobs (parsed with PyYAML; not run on a cluster)', () => {
  // biome-ignore lint/suspicious/noExplicitAny: parsed YAML; each test names the fields it reads
  type Doc = { kind: string; metadata: { name: string }; data?: Record<string, string>; spec: Record<string, any> }
  const docs = (file: string) => JSON.parse(yamlParse(read(file)).stdout) as Doc[]

  it('grade-job.yaml: an Indexed Job of the image CMD, one index per listed folder, each writing to the shared results volume', () => {
    const [roster, job] = docs('deploy/kubernetes/grade-job.yaml')
    expect([roster!.kind, job!.kind]).toEqual(['ConfigMap', 'Job'])
    const listed = parseRosterList(roster!.data!['roster.txt']!, 'roster.txt')
    const spec = job!.spec
    expect(spec).toMatchObject({ completionMode: 'Indexed', completions: listed.length, backoffLimitPerIndex: 1 })
    expect(spec.parallelism).toBeLessThanOrEqual(spec.completions)
    expect(spec.maxFailedIndexes).toBeLessThanOrEqual(spec.completions)
    expect(spec.podFailurePolicy.rules[0]).toEqual({ action: 'FailIndex', onExitCodes: { containerName: 'grade', operator: 'In', values: [2] } })
    const pod = spec.template.spec
    expect(pod.restartPolicy).toBe('Never')
    const [container] = pod.containers
    // The image's own CMD runs: the command tested above.
    expect(container).not.toHaveProperty('command')
    expect(container).not.toHaveProperty('args')
    const env = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]))
    expect(Object.keys(env).sort()).toEqual([...required].sort())
    expect(Number(env.IDEM_LAB_STAGE)).toBe(stageByNumber(Number(env.IDEM_LAB_STAGE)).number)
    const mounts = Object.fromEntries(container.volumeMounts.map((m: { name: string; mountPath: string; readOnly?: boolean }) => [m.name, m]))
    const volumes = Object.fromEntries(pod.volumes.map((v: { name: string }) => [v.name, v]))
    expect(env.IDEM_LAB_ROSTER_LIST).toBe(`${mounts.roster.mountPath}/roster.txt`)
    expect(volumes.roster.configMap.name).toBe(roster!.metadata.name)
    expect([env.IDEM_LAB_RESULTS, mounts.results.readOnly]).toEqual([mounts.results.mountPath, undefined])
    for (const l of listed) expect(l.folder.startsWith(`${mounts.submissions.mountPath}/`), l.folder).toBe(true)
    expect(mounts.submissions.readOnly).toBe(true)
    expect(container.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) })
    expect(container.resources.limits).toEqual({ cpu: expect.any(String), memory: expect.any(String) })
  })

  it('import-job.yaml: the same image runs scores:import on the same results volume', () => {
    const [job, grade] = [docs('deploy/kubernetes/import-job.yaml')[0]!, docs('deploy/kubernetes/grade-job.yaml')[1]!]
    const gradePod = grade.spec.template.spec
    const pod = job.spec.template.spec
    expect(pod.containers[0].image).toBe(gradePod.containers[0].image)
    expect(pod.containers[0].command.join(' ')).toMatch(/npm run --silent scores:import -- --store \/results\/store\/grades\.sqlite \/results\n/)
    const claim = (p: typeof pod, name: string) => p.volumes.find((v: { name: string }) => v.name === name).persistentVolumeClaim.claimName
    expect(claim(pod, 'results')).toBe(claim(gradePod, 'results'))
  })
})

/** As a container runtime masks /proc/keys, in a mount namespace of the test's own: the machine's /proc is untouched. */
const MASK = 'mount --bind /dev/null /proc/keys'
const maskable =
  process.getuid?.() === 0 &&
  !!findExecutable('bwrap') &&
  !!findExecutable('setpriv') &&
  spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', MASK], { stdio: 'ignore' }).status === 0

describe.skipIf(!maskable)('in a container that masks parts of /proc (Docker, Kubernetes)', () => {
  it('bwrap could make namespaces but not the sandbox own /proc: the probe says so, and a root grade runs as nobody (user)', {
    timeout: LIMIT_MS,
  }, async () => {
    const json = join(scratch.path, 'masked.json')
    const grade = commandArgv('grader/cli/grade.ts', ['0', '--solution', '--seed', '5', '--json', json])
    const r = await run('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', `${MASK} && exec "$@"`, 'sh', ...grade], {
      cwd: repoRoot,
      env: { ...process.env, TMPDIR: scratch.path, LAB_HOME: join(scratch.path, 'lab-home'), FORCE_COLOR: '0' },
      timeout: LIMIT_MS,
    })
    const result = JSON.parse(readFileSync(json, 'utf8')) as GradeResult
    expect([result.isolation, result.gradable, result.score], r.stdout + r.stderr).toEqual(['user', true, stage0.points])
  })
})

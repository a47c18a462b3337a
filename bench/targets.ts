// The servers under test: the stage 0 starter and each later stage's reference
// solution, each a real bank process on its own fresh database, with one
// client and two accounts so rich that no transfer is ever refused for funds.
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import Database from 'better-sqlite3'
import { BankClient } from '#harness/bankClient.ts'
import { course } from '#harness/course.ts'
import { HttpClient } from '#harness/http.ts'
import { repoRoot } from '#harness/paths.ts'
import { onCleanup } from '#harness/processes.ts'
import { ServerProcess } from '#harness/spawnServer.ts'
import type { LoadTarget } from './load.ts'

/** The contract's largest amount: a balance nothing in a bench run can exhaust. */
const HUGE_BALANCE = 1_000_000_000_000

export type Target = LoadTarget & {
  stage: number
  /** `stages/00-unprotected` for stage 0, `solutions/NN-slug` for the others. */
  label: string
  dbPath: string
}

/** Stage 0's starter is what learners start from; every later stage is measured as its reference solution. */
export function benchedFolder(number: number): string {
  const stage = course.stages.find((s) => s.number === number)
  if (!stage) throw new Error(`course.json has no stage ${number}`)
  return number === 0 ? `stages/${stage.folder}` : `solutions/${stage.folder}`
}

export class Targets {
  private readonly tmp = mkdtempSync(join(tmpdir(), 'idem-bench-'))
  /** Removed by stop(), or on exit and Ctrl-C if stop() never ran. */
  private readonly forgetTmp = onCleanup(() => rmSync(this.tmp, { recursive: true, force: true }))
  readonly list: Target[] = []

  /** Starts one server per stage, one after the other (starting them in parallel would only slow each start). */
  async start(stages: number[]): Promise<void> {
    for (const number of stages) {
      const label = benchedFolder(number)
      const adminToken = `adm_${randomBytes(16).toString('hex')}`
      const dbPath = join(this.tmp, `stage-${number}.sqlite`)
      const profile = profiling(number)
      const server = new ServerProcess({
        stageDir: resolve(repoRoot, label),
        dbPath,
        adminToken,
        env: { LAB_PROCESSING_DELAY_MS: '0', ...profile.env },
        entry: profile.entry,
      })
      await server.start()
      const bank = new BankClient(server, new HttpClient(() => {}), adminToken)
      const customer = await bank.newCustomer('bench')
      const from = await bank.openAccount(customer, HUGE_BALANCE)
      const to = await bank.openAccount(customer, HUGE_BALANCE)
      this.list.push({ stage: number, label, servers: [server], dbPath, customer, from, to })
    }
  }

  /** Rows in the ledger: how many transfers a target really executed. */
  static ledgerRows(target: Target): number {
    const db = new Database(target.dbPath, { readonly: true, fileMustExist: true })
    try {
      return (db.prepare('SELECT count(*) AS n FROM ledger').get() as { n: number }).n
    } finally {
      db.close()
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.list.flatMap((t) => t.servers.map((s) => s.stop())))
    rmSync(this.tmp, { recursive: true, force: true })
    this.forgetTmp()
  }
}

/**
 * BENCH_CPU_PROF=DIR profiles the servers: each writes DIR/stage-N.cpuprofile
 * when it stops (open it in Chrome DevTools or speedscope, or summarize it
 * with bench/profileSummary.ts). BENCH_CPU_PROF_STAGES=0,5 limits it to some stages.
 */
function profiling(stage: number): { entry?: string; env: Record<string, string> } {
  const dir = process.env.BENCH_CPU_PROF
  const only = process.env.BENCH_CPU_PROF_STAGES?.split(',').map(Number)
  if (!dir || (only && !only.includes(stage))) return { env: {} }
  mkdirSync(dir, { recursive: true })
  return { entry: 'bench/profiledMain.ts', env: { BENCH_CPU_PROF_FILE: resolve(dir, `stage-${stage}.cpuprofile`) } }
}

// Replays a day against one stage: starts the stage's server and the fault
// proxy, creates the clients and accounts, replays, reads the ledger, judges.
import { createHash, randomBytes } from 'node:crypto'
import { BankClient } from '#harness/bankClient.ts'
import { stageByNumber } from '#harness/course.ts'
import { HttpClient } from '#harness/http.ts'
import { ServerProcess } from '#harness/spawnServer.ts'
import { describeSource, Workspace, type Source } from '#harness/workspace.ts'
import { parseDay } from '../logs/format.ts'
import type { DamageReport } from './damage.ts'
import { judge } from './judge.ts'
import { codeKind } from './provenance.ts'
import { FaultProxy } from './proxy.ts'
import { replay, type ReplayProgress, type ServerControl } from './replayer.ts'
import { Sender } from './sender.ts'
import { buildWorld } from './world.ts'

/**
 * The server's settings for a replay. The lease stands for one minute of the
 * day at the replay's retry scale (1:20); every client's retry horizon (two
 * minutes or more) outlasts it, so a retry can take over a claim orphaned by
 * the restart. The small processing delay keeps simultaneous requests
 * overlapping inside the server, as on the real day.
 */
export const REPLAY_ENV = { LAB_PROCESSING_DELAY_MS: '3', LAB_LEASE_MS: '3000' }

export type ReplayOptions = {
  stage: number
  source: Source
  /** The day: its text, and the name to report it under. */
  day: { text: string; file: string }
  concurrency?: number
  onProgress?: (p: ReplayProgress) => void
}

export async function replayStage(options: ReplayOptions): Promise<DamageReport> {
  const stage = stageByNumber(options.stage)
  const lines = parseDay(options.day.text)
  const workspace = new Workspace(options.source)
  const adminToken = `adm_${randomBytes(16).toString('hex')}`
  const http = new HttpClient(() => undefined)
  let server = new ServerProcess({ stageDir: workspace.stageDir(stage), dbPath: workspace.newDbPath(), adminToken, env: REPLAY_ENV })
  let bank = new BankClient(server, http, adminToken)
  let proxy: FaultProxy | undefined
  let sender: Sender | undefined
  let restarts = 0
  try {
    await server.start()
    proxy = new FaultProxy(server.url)
    await proxy.start()
    const concurrency = options.concurrency ?? 16
    sender = new Sender(proxy.url, concurrency + 4)
    const started = performance.now()
    const world = await buildWorld(bank, lines)
    const control: ServerControl = {
      hold: async () => void (await bank.core({ hold: true })),
      inflight: async () => (await bank.core({})).inflight,
      async killAndRestart() {
        proxy!.pause()
        await server.crash()
        // A fresh process on the same options, hence the same database file.
        server = new ServerProcess(server.options)
        bank = new BankClient(server, http, adminToken)
        await server.start()
        proxy!.resume(server.url)
        restarts++
      },
    }
    const records = await replay(lines, world, sender, control, { concurrency, onProgress: options.onProgress })
    const replayMs = Math.round(performance.now() - started)
    if (!server.alive) throw new Error(`the server ${server.unexpectedExit ?? 'stopped'} during the replay; its last lines:\n${server.logTail()}`)
    const verdict = judge(records, await bank.ledger(), world)
    const requests = records.filter((r) => r.sent).length
    return {
      stage: stage.number,
      slug: stage.slug,
      source: options.source.kind === 'dir' ? describeSource(options.source).trim() : options.source.kind,
      code: codeKind(stage, options.source),
      day: {
        file: options.day.file,
        sha256: createHash('sha256').update(options.day.text).digest('hex'),
        lines: lines.length,
        intents: new Set(lines.map((l) => l.intent)).size,
      },
      requests,
      skippedRetries: records.length - requests,
      replayMs,
      attemptsPerSecond: Math.round((requests / replayMs) * 1000),
      faults: { ...proxy.counts(), restarts },
      ...verdict.total,
      byKind: verdict.byKind,
      examples: verdict.examples,
      anomalies: verdict.anomalies,
    }
  } finally {
    await sender?.close()
    await proxy?.stop()
    await server.stop()
    workspace.dispose()
  }
}

// Replays a day against one stage: starts the stage's server (or, on
// PostgreSQL, three instances: instances.ts) behind the fault proxy, creates
// the clients and accounts, replays, reads the ledger, judges.
import { createHash, randomBytes } from 'node:crypto'
import { stageByNumber } from '#harness/course.ts'
import { HttpClient } from '#harness/http.ts'
import { describeSource, Workspace, type Source } from '#harness/workspace.ts'
import { parseDay } from '../logs/format.ts'
import type { DamageReport } from './damage.ts'
import { judge } from './judge.ts'
import { codeKind } from './provenance.ts'
import { BankInstances } from './instances.ts'
import { replay, type ReplayProgress } from './replayer.ts'
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
  const instances = new BankInstances({ stage, workspace, adminToken, http: new HttpClient(() => undefined), env: REPLAY_ENV })
  let sender: Sender | undefined
  try {
    const proxy = await instances.start()
    const concurrency = options.concurrency ?? 16
    sender = new Sender(proxy.url, concurrency + 4)
    const started = performance.now()
    const world = await buildWorld(instances.banks[0]!, lines)
    const records = await replay(lines, world, sender, instances.control, { concurrency, onProgress: options.onProgress })
    const replayMs = Math.round(performance.now() - started)
    const dead = instances.deadInstance()
    if (dead) throw new Error(dead)
    // Every instance reads the one database: any of them shows the whole ledger.
    const verdict = judge(records, await instances.banks[0]!.ledger(), world)
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
      faults: { ...proxy.counts(), restarts: instances.killed.length },
      instances: { count: instances.servers.length, forwarded: [...proxy.forwarded], killed: instances.killed },
      ...verdict.total,
      byKind: verdict.byKind,
      examples: verdict.examples,
      anomalies: verdict.anomalies,
    }
  } finally {
    await sender?.close()
    await instances.stop()
    workspace.dispose()
  }
}

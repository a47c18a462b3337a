// Generates the request log of one day from a seed. The same seed and size
// always give the same bytes (test/day.generate.test.ts checks the committed
// day against a fresh generation).
import { Rng } from '#harness/rng.ts'
import { BATCH_GAP_MS, BATCH_RUNS, PROFILES } from './clients.ts'
import { formatLine, formatTime, isTimeOfDay, parseTime, type AttemptLine, type ClientName } from './format.ts'
import { IntentPlanner, type PlannedIntent } from './intents.ts'
import { serialize } from './serialize.ts'

/** The committed day, logs/day.jsonl, is generated with these. */
export const DAY_SEED = 20261130
export const DAY_ATTEMPTS = 20_000
export const DAY_FILE = 'logs/day.jsonl'

/** The server is killed at this moment, with these clients' requests inside it. */
export const RESTART_AT = '13:37:00.000'
const RESTART_GROUP: ClientName[] = ['mobile-app', 'mobile-app', 'mobile-app', 'web-app', 'web-app', 'teller-desk']
/** No other traffic this close to the kill, so that exactly the planned requests are in flight. */
const KEEP_CLEAR_MS = 2_000

export type DayOptions = { seed: number; attempts: number }

type Timed = { intent: PlannedIntent; t0: number; order: number }

const attemptCount = (i: PlannedIntent) => i.attempts.length

export function generateDay({ seed, attempts: target }: DayOptions): string {
  const rng = new Rng(seed, 'day')
  const planner = new IntentPlanner(rng)
  const killAt = parseTime(RESTART_AT)

  // 1. What happens: the planned incidents first, then ordinary traffic up to the size asked for.
  const beforeKill = RESTART_GROUP.map((_, i) => 20 + i * 60 + rng.int(0, 40))
  const restart = RESTART_GROUP.map((client, i) => planner.inFlightAtRestart(client, beforeKill[i]!))
  const amendments = Array.from({ length: Math.max(2, Math.round(target / 500)) }, () => planner.tellerAmendment())
  const pairs = Array.from({ length: Math.max(2, Math.round(target / 700)) }, () => planner.sharedKeyPair())
  const ordinary: PlannedIntent[] = []
  let total = [...restart, ...amendments, ...pairs.flat()].reduce((n, i) => n + attemptCount(i), 0)
  const clients = Object.values(PROFILES)
  while (total < target) {
    let roll = rng.int(0, 999) / 1000
    const client = clients.find((p) => (roll -= p.share) < 0)?.name ?? 'mobile-app'
    let intent = planner.ordinary(client)
    if (attemptCount(intent) > target - total) intent = planner.plain(client)
    ordinary.push(intent)
    total += attemptCount(intent)
  }

  // 2. When: the restart group just before the kill, the batch job in its runs, everyone else by their hourly curve.
  const timed: Timed[] = []
  const at = (intent: PlannedIntent, t0: number) => timed.push({ intent, t0, order: timed.length })
  restart.forEach((intent, i) => at(intent, killAt - beforeKill[i]!))
  const batch = ordinary.filter((i) => i.client.name === 'partner-batch')
  const firstRun = Math.ceil(batch.length * BATCH_RUNS[0].share)
  const runs = [batch.slice(0, firstRun), batch.slice(firstRun)]
  for (const [, second] of pairs) runs[1]!.splice(rng.int(0, runs[1]!.length), 0, second)
  runs.forEach((run, r) => {
    let t = parseTime(BATCH_RUNS[r]!.start)
    for (const intent of run) at(intent, (t += rng.int(BATCH_GAP_MS.min, BATCH_GAP_MS.max)))
  })
  const fits = (intent: PlannedIntent, t0: number) =>
    intent.attempts.every(({ offsetMs }) => isTimeOfDay(t0 + offsetMs) && Math.abs(t0 + offsetMs - killAt) > KEEP_CLEAR_MS)
  const draw = (intent: PlannedIntent, pick: () => number) => {
    let t0 = pick()
    while (!fits(intent, t0)) t0 = pick()
    at(intent, t0)
  }
  for (const [first] of pairs) draw(first, () => rng.int(parseTime('08:00:00.000'), parseTime('12:30:00.000')))
  for (const intent of [...amendments, ...ordinary.filter((i) => i.client.name !== 'partner-batch')]) {
    const weights = intent.client.hourly
    draw(intent, () => {
      let roll = rng.int(0, weights.reduce((a, b) => a + b, 0) - 1)
      const hour = weights.findIndex((w) => (roll -= w) < 0)
      return hour * 3_600_000 + rng.int(0, 3_599_999)
    })
  }
  for (const { intent, t0 } of timed)
    if (intent.kind !== 'server-restart' && !fits(intent, t0)) throw new Error(`the batch run does not fit the day at ${formatTime(t0)}`)

  // 3. Who and how: ids and keys in time order, then each attempt as its client's library writes it.
  timed.sort((a, b) => a.t0 - b.t0 || a.order - b.order)
  const keys = new KeyMaker(rng)
  const keyOf = new Map<PlannedIntent, string>()
  const lines: Array<AttemptLine & { ms: number; seq: number }> = []
  timed.forEach(({ intent, t0 }, n) => {
    const key = intent.keyFrom ? keyOf.get(intent.keyFrom)! : keys.next(intent)
    keyOf.set(intent, key)
    const id = `i${String(n + 1).padStart(5, '0')}`
    const { client } = intent
    let previousBody = ''
    intent.attempts.forEach((a, i) => {
      const style = a.retryStyle ? client.retryStyle : client.style
      let body = serialize(a.payload, style, rng)
      // A re-serializing library's retry must really differ from what it sent first.
      for (let tries = 0; intent.kind === 'reserialized-retry' && body === previousBody && tries < 10; tries++) body = serialize(a.payload, style, rng)
      previousBody = body
      const ms = t0 + a.offsetMs
      lines.push({
        ms,
        seq: lines.length,
        t: formatTime(ms),
        client: client.name,
        intent: id,
        kind: intent.kind,
        key,
        method: 'POST',
        path: intent.path,
        attempt: i + 1,
        cause: a.cause,
        fault: a.fault,
        body,
      })
    })
  })
  lines.sort((a, b) => a.ms - b.ms || a.seq - b.seq)
  return lines.map(({ ms: _ms, seq: _seq, ...line }) => `${formatLine(line)}\n`).join('')
}

/** Idempotency keys as each client makes them: UUIDs, quoted UUIDs, or order numbers. */
class KeyMaker {
  private readonly used = new Set<string>()
  private readonly counters = { 'web-app': 1_048_213, 'partner-batch': 1_031_977 } as Record<ClientName, number>

  constructor(private readonly rng: Rng) {}

  next(intent: PlannedIntent): string {
    const { client } = intent
    let key: string
    do {
      if (client.keyStyle === 'uuid') key = this.rng.uuid()
      else if (client.keyStyle === 'quoted-uuid') key = `"${this.rng.uuid()}"`
      else key = `ord-${(this.counters[client.name] += this.rng.int(1, 3))}`
    } while (this.used.has(key))
    this.used.add(key)
    return key
  }
}

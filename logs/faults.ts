// The day's faults and incident kinds, in one ordered table each: what the
// generator writes into the log, how the replay makes it real, how the judge
// treats it and how the report names it. The log format (format.ts), the
// planner (intents.ts), the replayer, the proxy, the judge, the damage report
// and the chart all read these rows, so a fault or a kind is added here once.
// The order is the log's enum order and the report's row order. logs/README.md
// explains each row in prose.

/** How the replay makes a fault happen. */
export type FaultPlay =
  /** Nothing: the attempt goes through. */
  | 'none'
  /** The fault proxy does it, told by the X-Lab-Fault header that the replayer adds. */
  | 'proxy'
  /** The replayer SIGKILLs the server with this group of attempts inside it. */
  | 'restart'

/** What the network (or the operator) does to one attempt during the replay. */
export const FAULT_TABLE = [
  { fault: 'none', play: 'none', reachesServer: true },
  {
    fault: 'drop-response',
    play: 'proxy',
    // The server processed it in full; only the answer is lost.
    reachesServer: true,
    counter: 'dropResponse',
    label: 'responses dropped',
  },
  {
    fault: 'reset-before',
    play: 'proxy',
    // The connection is reset before a byte reaches the server: what the client sends next is not a duplicate.
    reachesServer: false,
    counter: 'resetBefore',
    label: 'connections reset',
  },
  {
    fault: 'server-killed',
    play: 'restart',
    reachesServer: true,
    counter: 'cutByRestart',
    label: 'cut by {restarts} restart(s)',
  },
] as const satisfies ReadonlyArray<{
  fault: string
  play: FaultPlay
  /** Whether the server saw the attempt (the judge counts what reached it). */
  reachesServer: boolean
  /** Its figure in DamageReport.faults: how many times the replay really applied it. */
  counter?: string
  /** Its words in the report's footer, after its count ({restarts}: the number of restarts). */
  label?: string
}>

type FaultRow = (typeof FAULT_TABLE)[number]
export type Fault = FaultRow['fault']
/** The faults the proxy plays. */
export type ProxyFault = Extract<FaultRow, { play: 'proxy' }>['fault']
/** The faults the replay counts, and the names of their figures in DamageReport.faults. */
export type CountedFault = Extract<FaultRow, { counter: string }>['fault']
export type FaultCounter = Extract<FaultRow, { counter: string }>['counter']

export const FAULTS = FAULT_TABLE.map((row) => row.fault)
export const COUNTED_FAULTS = FAULT_TABLE.flatMap((row) => ('counter' in row ? [row.fault] : []))

export function faultRow(fault: Fault): FaultRow {
  const row = FAULT_TABLE.find((r) => r.fault === fault)
  if (!row) throw new RangeError(`unknown fault ${fault}`)
  return row
}

/**
 * The ground truth of an intent, which the server never sees, follows from its kind:
 * - executes: moves its money exactly once;
 * - insufficient-funds: is refused with 402 and moves nothing;
 * - amendment-refused: the first amount moves exactly once, and the amended
 *   resubmission under the same key must not be acknowledged as if applied.
 */
export type Expect = 'executes' | 'insufficient-funds' | 'amendment-refused'

/** What happened to an intent that day: the damage report and the chart are broken down by these. */
export const KIND_TABLE = [
  { kind: 'plain', firstFault: 'none', expect: 'executes', color: '#9e9e9e' },
  { kind: 'gateway-timeout', firstFault: 'drop-response', expect: 'executes', color: '#e6550d' },
  { kind: 'reserialized-retry', firstFault: 'drop-response', expect: 'executes', color: '#fd8d3c' },
  { kind: 'connection-reset', firstFault: 'reset-before', expect: 'executes', color: '#31a354' },
  { kind: 'double-tap', firstFault: 'none', expect: 'executes', color: '#3182bd' },
  { kind: 'teller-amendment', firstFault: 'drop-response', expect: 'amendment-refused', color: '#756bb1' },
  { kind: 'shared-key', firstFault: 'none', expect: 'executes', color: '#de2d26' },
  { kind: 'server-restart', firstFault: 'server-killed', expect: 'executes', color: '#636363' },
  // The planner drops the 402 of about half of them, so that the retry must replay a refusal.
  { kind: 'insufficient-funds', firstFault: 'drop-response', expect: 'insufficient-funds', color: '#bcbd22' },
] as const satisfies ReadonlyArray<{
  kind: string
  /** The fault the planner gives the intent's first attempt (the one that makes the incident). */
  firstFault: Fault
  expect: Expect
  /** Its colour in the chart. */
  color: string
}>

type KindRow = (typeof KIND_TABLE)[number]
export type IncidentKind = KindRow['kind']

export const KINDS = KIND_TABLE.map((row) => row.kind)

export function kindRow(kind: IncidentKind): KindRow {
  const row = KIND_TABLE.find((r) => r.kind === kind)
  if (!row) throw new RangeError(`unknown incident kind ${kind}`)
  return row
}

export const expectOf = (kind: IncidentKind): Expect => kindRow(kind).expect

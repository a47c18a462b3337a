// A failing history as a shell script a learner can run against a server of
// their own: the grade's servers listened on Unix sockets that are gone once
// the grade ends, and its clients, accounts and clock were its own.
//
// The script starts from `npm run serve -- N --fresh --clock MS` (its clock
// standing where the grade's stood when the history began), recreates the
// history's two clients and their accounts through the admin API, and then
// does every step in order: each money request as the grade sent it (its
// bytes, with the grade's API keys and account ids replaced by the ones the
// server just made), each admin step as the admin call the grade made (the
// core held, let go, failing; the clock moved by as much as the grade's;
// the server killed, and started again by the learner). A request that waited
// in a held core is sent in the background, as the grade did, and its answer
// printed when the core lets it go. What cannot be redone exactly is a
// comment saying so, never a command that would do something else.
import type { SentRequest } from '#harness/http.ts'
import type { Line } from '#harness/i18n/phrase.ts'
import type { Op } from './history.ts'
import type { HistoryRun, Mismatch, Party, Step } from './runHistory.ts'

/** A failing history as the page and the replay show it (timeline.ts re-exports it). */
export type ShownFailure = { run: HistoryRun; stage: number; seed: number; instances: Line[]; rerun: string }

/** A step as the page and the script tell it: in English, like the rest of the evidence they hold (the report says it in the learner's language). */
export type EnglishStep = Step & { what: string; answer: string; clock?: string }
type EnglishFailure = Omit<ShownFailure, 'run' | 'instances'> & {
  instances: string[]
  run: Omit<HistoryRun, 'steps' | 'mismatch'> & { steps: EnglishStep[]; mismatch?: Mismatch & { expected: string; got: string } }
}

/** `f` with its steps and verdict in English. */
export function inEnglish(f: ShownFailure): EnglishFailure {
  const steps = f.run.steps.map(
    (s): EnglishStep => ({ ...s, what: String(s.what), answer: String(s.answer), clock: s.clock === undefined ? undefined : String(s.clock) }),
  )
  const { mismatch: m, ...run } = f.run
  return {
    ...f,
    instances: f.instances.map(String),
    run: { ...run, steps, ...(m ? { mismatch: { ...m, expected: String(m.expected), got: String(m.got) } } : {}) },
  }
}

/** The first port a replay's servers listen on (instance i on FIRST_PORT + i). */
export const FIRST_PORT = 3000

/** The name the replay script goes by, beside the history's page (stage-N-seed-S.html). */
export const timelineScriptName = (f: Pick<ShownFailure, 'stage' | 'seed'>) => `stage-${f.stage}-seed-${f.seed}.sh`

// ---- shell words ---------------------------------------------------------------------

/** A piece of a shell word: text as it is, or a variable's value. */
type Part = string | { v: string }

const BARE = /^[\w@%+=:,./-]+$/

/** Single quotes, or none when nothing in the text means anything to the shell. */
export const shellQuote = (text: string) => (text !== '' && BARE.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`)

/** One shell word: literal parts quoted, variables in double quotes, side by side. */
function word(parts: Part[]): string {
  const merged: Part[] = []
  for (const p of parts) {
    const last = merged.at(-1)
    if (typeof p === 'string' && typeof last === 'string') merged[merged.length - 1] = last + p
    else if (p !== '') merged.push(p)
  }
  if (merged.length === 0) return "''"
  return merged.map((p) => (typeof p === 'string' ? shellQuote(p) : `"$${p.v}"`)).join('')
}

/** A comment's text: on one line whatever the server sent (a newline would end the comment and start a command). */
const oneLine = (text: string) => text.replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')

/** The grade's literals (API keys, account ids) and the variables that stand for them. */
type Names = Array<{ literal: string; name: string }>

function namesOf(parties: Party[] | undefined): Names {
  const names: Names = []
  for (const p of parties ?? []) {
    names.push({ literal: p.apiKey, name: `KEY_${p.label}` })
    p.accounts.forEach((id, i) => names.push({ literal: id, name: `ACC_${p.label}${i}` }))
  }
  // Longest first: no literal is cut short by another it begins with.
  return names.filter((n) => n.literal !== '').sort((a, b) => b.literal.length - a.literal.length)
}

/** `text` cut where the grade's literals stand, each replaced by its variable. */
function substituted(text: string, names: Names): Part[] {
  if (names.length === 0) return [text]
  const pattern = new RegExp(names.map((n) => n.literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g')
  const parts: Part[] = []
  let at = 0
  for (const m of text.matchAll(pattern)) {
    parts.push(text.slice(at, m.index), { v: names.find((n) => n.literal === m[0])!.name })
    at = m.index + m[0].length
  }
  parts.push(text.slice(at))
  return parts
}

/** Text for a comment or a message: the grade's literals named by their variables, on one line. */
const told = (text: string, names: Names) =>
  oneLine(
    substituted(text, names)
      .map((p) => (typeof p === 'string' ? p : `$${p.v}`))
      .join(''),
  )

/**
 * A JSON body whose string tokens spell one of the grade's literals with
 * escapes (a re-serialized body escapes some characters at random): each
 * such token is written plainly, so that the variable can take its place.
 * The JSON value is the same; `respelled` says the bytes are not.
 */
function plainLiterals(body: string, names: Names): { body: string; respelled: boolean } {
  let respelled = false
  const out = body.replace(/"(?:[^"\\]|\\.)*"/g, (token) => {
    if (!token.includes('\\')) return token
    let value: unknown
    try {
      value = JSON.parse(token)
    } catch {
      return token
    }
    if (!names.some((n) => n.literal === value)) return token
    respelled = true
    return JSON.stringify(value)
  })
  return { body: out, respelled }
}

// ---- the servers ---------------------------------------------------------------------

/** What a replay's server i needs besides the stage: its clock's skew, and the lease and TTL the grade gave it when not the defaults. */
type ServerSettings = { offsetMs: number; env: string[] }

/** Read from the instance's label (histories.ts): "instance 2 (clock −30 s) at LAB_LEASE_MS=2000, LAB_KEY_TTL_MS=9000". */
function settingsOf(label: string): ServerSettings {
  const skew = /\(clock ([+−-])(\d+(?:\.\d+)?) s\)/.exec(label)
  const offsetMs = skew ? Math.round(Number(skew[2]) * 1000) * (skew[1] === '+' ? 1 : -1) : 0
  const periods = /LAB_LEASE_MS=(\d+), LAB_KEY_TTL_MS=(\d+)/.exec(label)
  return { offsetMs, env: periods ? [`LAB_LEASE_MS=${periods[1]}`, `LAB_KEY_TTL_MS=${periods[2]}`] : [] }
}

export type Replay = {
  /** One command per server, in the order to start them (each in a terminal of its own). */
  start: string[]
  /** The grade's clock when the history began, when the run recorded it: the --clock of the start commands. */
  clockStart?: number
  /** The script's text (POSIX sh). */
  script: string
}

/** The history's replay: how to start its servers, and the script of its steps. */
export function replayOf(shown: ShownFailure): Replay {
  const f = inEnglish(shown)
  const names = namesOf(f.run.parties)
  const servers = f.instances.map(settingsOf)
  const multi = servers.length > 1
  const urlVar = (i: number) => (multi ? `URL${i + 1}` : 'URL')
  const url = (i: number): Part[] => [{ v: urlVar(i) }]
  const times = timesOf(f.run.steps)
  const clockStart = times.start
  const pg = f.stage >= 6
  /**
   * The command that starts server i; `clock` is the --clock word (a number,
   * or shell arithmetic the script expands). A restart is printed by the
   * script: with the token and database it has, where the first start names them.
   */
  const serveCommand = (i: number, clock: string, how: { fresh?: boolean; token?: boolean; restart?: boolean }) =>
    [
      ...(how.token ? ['LAB_ADMIN_TOKEN=$ADMIN'] : []),
      ...(pg ? [how.restart ? `LAB_DATABASE_URL=\${LAB_DATABASE_URL:-postgres://…}` : 'LAB_DATABASE_URL=postgres://…'] : []),
      ...servers[i]!.env,
      ...(servers[i]!.offsetMs ? [`LAB_CLOCK_OFFSET_MS=${servers[i]!.offsetMs}`] : []),
      // A restart listens where the script sends its requests: the port of its URL.
      `npm run serve -- ${f.stage}${how.fresh ? ' --fresh' : ''} --port ${how.restart ? `\${${urlVar(i)}##*:}` : FIRST_PORT + i} --clock ${clock}`,
    ].join(' ')
  const startClock = clockStart === undefined ? '"$(date +%s)000"' : String(clockStart)
  const start = servers.map((_, i) => serveCommand(i, startClock, { fresh: i === 0 && !pg, token: i > 0 }))

  const out: string[] = []
  const line = (...parts: string[]) => out.push(parts.join(' '))
  const comment = (text: string) => out.push(`# ${told(text, names)}`)
  const say = (text: string) => out.push(`printf '%s\\n' ${shellQuote(told(text, names))}`)

  // ---- the preamble: how to run it, and the helpers every step uses
  const script = timelineScriptName(f)
  out.push(
    '#!/bin/sh',
    `# Stage ${f.stage}, seed ${f.seed}: the shortest failing history of the grade, replayed step by step on a server of your own.`,
    `# The grade's own rerun: ${oneLine(f.rerun)}`,
    '#',
    `# 1. From the course's folder, start the stage's server${multi ? 's, each in a terminal of its own, in this order' : ' in a terminal of its own'}${clockStart === undefined ? '' : ", its clock standing where the grade's stood when the history began"}:`,
    ...start.map((c) => `#      ${c}`),
    ...(multi ? ['#    (the second and third with ADMIN set to the admin token the first printed: export ADMIN=adm_…)'] : []),
    ...(pg
      ? [
          '#    LAB_DATABASE_URL: an empty PostgreSQL database of your own (stage 6 runs on PostgreSQL), the same for every server.',
          "#    The grade moved that database's now() along with the servers' clocks (harness/pgClock.ts); here it stays the",
          "#    host's, so a layer that reads now() sees other times than the grade's after each clock move.",
        ]
      : []),
    '# 2. In another terminal, with the admin token the server printed (adm_ and 32 hex digits: the only kind the bank moves its clock for):',
    `#      ADMIN=adm_… sh ${script}`,
    "#    Or set ADMIN there and paste the lines below in order. Run it once per fresh server: the idempotency keys are the grade's.",
    '#    Each answer is printed in full (curl -i), under the answer the grade got.',
    '',
    `: "\${ADMIN:?set ADMIN to the admin token npm run serve printed}"`,
    'export ADMIN',
    ...servers.map((_, i) => `${urlVar(i)}=\${${urlVar(i)}:-http://127.0.0.1:${FIRST_PORT + i}}`),
    '# Answers of requests that wait in a held core, sent in the background as the grade sent them.',
    'OUT=$(mktemp -d)',
    '# json NAME: member NAME of the JSON object on stdin (a list: its items), read with node, which npm needs anyway.',
    `json() { node -e 'let s="";process.stdin.on("data",(d)=>{s+=d}).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];console.log(Array.isArray(v)?v.join(" "):v)})' "$1"; }`,
    '# admin URL BODY: an admin PUT (/admin/core, /admin/clock), its answer printed.',
    `admin() { curl -sS -X PUT "$1" -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' --data-raw "$2"; echo; }`,
    "# step N WHAT GOT: a step's heading, with what the grade got.",
    `step() { printf '\\n=== step %s: %s\\n    the grade got: %s\\n' "$1" "$2" "$3"; }`,
    '# wait_core URL inflight|held N: waits, as the grade did, until N calls are inside the core (inflight) or N are held',
    '# alone there (held); prints the number of the newest call held alone, which a let-go names.',
    `wait_core() { node -e 'const [u,what,n]=process.argv.slice(1),end=Date.now()+10000;(async()=>{for(;;){const s=await(await fetch(u+"/admin/core",{headers:{authorization:"Bearer "+process.env.ADMIN}})).json();if((what==="held"?s.held.length:s.inflight)>=Number(n)){console.log(Math.max(0,...s.held));return}if(Date.now()>end){console.error("not in the core after 10 s: it was answered at once, or is still on its way");console.log(0);return}await new Promise((r)=>setTimeout(r,20))}})()' "$@"; }`,
    '# show N PID: the answer of step N, sent in the background, once it came.',
    `show() { wait "$2"; printf '\\n=== step %s, its answer:\\n' "$1"; cat "$OUT/step-$1"; }`,
    '# wait_up URL COMMAND: the server was killed, as in the grade; waits until it is started again.',
    `wait_up() { printf '\\n%s\\n  %s\\n' "The server at $1 is down, as in the grade. Start it again in its terminal, on the same database (no --fresh):" "$2" >&2; until curl -sf "$1/health" >/dev/null 2>&1; do sleep 0.5; done; }`,
    '',
  )
  const hasClockMoves = f.run.steps.some((s) => s.clock)
  line(`CLOCK0=$(curl -sS "$${urlVar(0)}/admin/clock" -H "Authorization: Bearer $ADMIN" | json nowMs)`)
  if (hasClockMoves) {
    comment("The history moves the clock: the server's must stand still until moved (npm run serve -- … --clock MS).")
    line(
      `[ "$(curl -sS "$${urlVar(0)}/admin/clock" -H "Authorization: Bearer $ADMIN" | json controlled)" = true ] || echo 'the clock is the host clock: start the server with --clock, or the clock moves answer 409' >&2`,
    )
  }

  // ---- the clients and their accounts
  const parties = f.run.parties ?? []
  out.push('')
  if (parties.length === 0)
    comment('The grade did not record its clients: the requests below carry its API keys and account ids, which this server does not know.')
  else
    comment(
      `The history's clients, as the grade made them, with two accounts each (₩${parties.map((p) => p.openingBalance).join(', ₩')}): this server gives them other keys and ids, named here by variables.`,
    )
  for (const p of parties) {
    const adminPost = (path: string, body: unknown) =>
      `curl -sS -X POST "$${urlVar(0)}"${path} -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' --data-raw ${shellQuote(JSON.stringify(body))}`
    line(`KEY_${p.label}=$(${adminPost('/admin/clients', { name: p.name })} | json apiKey)`)
    for (const i of [0, 1])
      line(
        `ACC_${p.label}${i}=$(curl -sS -X POST "$${urlVar(0)}"/accounts -H "Authorization: Bearer $KEY_${p.label}" -H 'Content-Type: application/json' --data-raw ${shellQuote(JSON.stringify({ balance: p.openingBalance }))} | json id)`,
      )
    line(`echo "client ${p.label}: API key $KEY_${p.label}, accounts ${p.label}0 $ACC_${p.label}0 and ${p.label}1 $ACC_${p.label}1"`)
  }

  // ---- the steps
  type Held = { step: number; instance: number; alone: boolean; sent: boolean }
  const held: Held[] = []
  const relAt = (ms: number) => (ms === 0 ? '$CLOCK0' : `$((CLOCK0 + ${ms}))`)
  const restartCommand = (i: number, rel: number | undefined) =>
    serveCommand(i, rel === undefined ? "<where the grade's clock stood>" : relAt(rel), { token: true, restart: true }).replaceAll('"', '\\"')
  const answersOf = (i: number, why: string) => {
    for (const h of held.filter((h) => h.instance === i)) {
      held.splice(held.indexOf(h), 1)
      if (h.sent) line(`show ${h.step} "$P${h.step}"`)
      else comment(`(step ${h.step}'s request was not sent here: nothing to show ${why})`)
    }
  }
  const mismatch = f.run.mismatch

  for (const s of f.run.steps) {
    const kind = kindOf(s)
    const rel = times.rel.get(s.index)
    const skipped = s.answer.startsWith('(skipped')
    out.push('')
    comment(
      `step ${s.index}${s.instance !== undefined && multi ? ` · ${f.instances[s.instance] ?? s.instance}` : ''} · ${s.what}${s.answer ? `  →  ${s.answer}` : ''}`,
    )
    line('step', String(s.index), shellQuote(told(s.what, names)), shellQuote(told(s.answer || '(nothing to answer)', names)))
    const inst = s.instance ?? 0
    const u = url(inst)
    if (s.clock) {
      if (rel === undefined) comment(`the grade's clock moved ${s.clock}: its time is not recorded, so this replay cannot move the clock to the same moment`)
      else {
        comment(`the clock moves ${s.clock}: ${rel} ms after the history began${multi ? ', on every server (each adds its own skew)' : ''}`)
        servers.forEach((_, i) => line('admin', `"$${urlVar(i)}"/admin/clock`, `'{"nowMs":'"${relAt(rel)}"'}'`))
      }
    }
    if (skipped) {
      comment('the grade skipped this step: nothing to do')
      continue
    }
    switch (kind) {
      case 'hold':
        line('admin', `${word([...u, '/admin/core'])}`, shellQuote('{"hold":true}'))
        break
      case 'core-fails':
        line('admin', `${word([...u, '/admin/core'])}`, shellQuote('{"failNext":1}'))
        break
      case 'release':
        line('admin', `${word([...u, '/admin/core'])}`, shellQuote('{"hold":false}'))
        answersOf(inst, 'when the core lets it go')
        break
      case 'let-go': {
        const named = /step (\d+)'s request/.exec(s.what)
        const key = s.op?.op === 'let-go' ? `k${s.op.key}` : undefined
        const alone = held.filter((h) => h.alone)
        const h = alone.find((h) => named && h.step === Number(named[1])) ?? alone.find((h) => key && f.run.steps[h.step - 1]?.key === key) ?? alone[0]
        const fails = s.op?.op === 'let-go' ? s.op.fails : /fail/.test(s.what)
        if (!h?.sent) {
          comment(
            `the request it lets go${h ? ` (step ${h.step})` : ''} was not sent here: its call number is unknown (GET /admin/core lists the calls held alone)`,
          )
          if (h) held.splice(held.indexOf(h), 1)
          break
        }
        const target = url(h.instance)
        line('admin', word([...target, '/admin/core']), `'{"letGo":{"call":'"$CALL${h.step}"',"fails":${fails}}}'`)
        held.splice(held.indexOf(h), 1)
        line(`show ${h.step} "$P${h.step}"`)
        break
      }
      case 'crash':
        comment('SIGKILL: the bank process (GET /health names its pid), as the grade killed it; then you start it again')
        line(`kill -9 "$(curl -sS ${word([...u, '/health'])} | json pid)"`)
        line('wait_up', word(u), `"${restartCommand(inst, rel)}"`)
        answersOf(inst, 'after the crash')
        break
      case 'send':
        sendStep(s, inst)
        break
      case 'clock':
        break
      default:
        comment('(not a step this replay knows how to redo)')
    }
    if (s.ledger) comment(`the ledger after it, as the grade read it: ${s.ledger}`)
    if (!s.op && s.what.includes('key table'))
      comment("the grade then read the layer's key table: look for the keys in the database's rows yourself (sqlite3, or psql)")
    if (mismatch?.step === s.index) {
      comment(`✗ the grade stopped here: the contract allows ${mismatch.expected}; it got ${mismatch.got}`)
      say(`✗ step ${s.index}: the contract allows: ${mismatch.expected}`)
      say(`  the grade got: ${mismatch.got}`)
    }
  }
  if (held.length) {
    out.push('')
    const files = held.filter((h) => h.sent).map((h) => `$OUT/step-${h.step}`)
    const waiting = `step${held.length > 1 ? 's' : ''} ${held.map((h) => h.step).join(', ')}`
    comment(`The history ends with ${waiting} still waiting in a held core (PUT /admin/core {"hold": false} lets them go).`)
    if (files.length) line(`echo "the answers of ${waiting}, once the core lets go: ${files.join(' ')}"`)
  }
  return { start, ...(clockStart !== undefined ? { clockStart } : {}), script: `${out.join('\n')}\n` }

  /** A money request: sent as the grade sent it; in the background when it waited in a held core. */
  function sendStep(s: EnglishStep, inst: number): void {
    const heldThere = /^held (alone )?in the core/.test(s.answer)
    const alone = s.answer.startsWith('held alone')
    const killed = s.answer.startsWith('killed after the commit')
    const request = s.exchange?.request
    const u = url(inst)
    if (!request) {
      comment(
        heldThere
          ? 'its request was not recorded (it still waited in the core when its history moved on): it cannot be sent again here'
          : 'its request was not recorded: it cannot be sent again here',
      )
      if (heldThere) held.push({ step: s.index, instance: inst, alone, sent: false })
      return
    }
    if (alone) line('admin', word([...u, '/admin/core']), shellQuote('{"holdNext":1}'))
    if (killed) {
      comment('the fault point: the bank dies right after this request commits, before it answers (the answer is lost)')
      line('admin', word([...u, '/admin/core']), shellQuote('{"crashAfterCommit":true}'))
    }
    const { command, respelled } = curlOf(request, u, names)
    if (respelled) comment('(the grade spelled an account id in this body with \\u escapes; it is sent plainly here, the same JSON)')
    if (heldThere) {
      comment('it waits in the held core: sent in the background, as the grade sent it, and answered when the core lets it go')
      line(`${command} >"$OUT/step-${s.index}" 2>&1 & P${s.index}=$!`)
      held.push({ step: s.index, instance: inst, alone, sent: true })
      const count = held.filter((h) => h.instance === inst && (!alone || h.alone)).length
      if (alone) line(`CALL${s.index}=$(wait_core ${word(u)} held ${count})`)
      else line(`wait_core ${word(u)} inflight ${count} >/dev/null`)
      return
    }
    line(`${command}; echo`)
    if (killed) {
      const rel = times.rel.get(s.index)
      line('wait_up', word(u), `"${restartCommand(inst, rel)}"`)
      answersOf(inst, 'after the crash')
    }
  }
}

/** The curl of a request the grade sent, to server `url`, its literals replaced by variables. */
function curlOf(r: SentRequest, url: Part[], names: Names): { command: string; respelled: boolean } {
  // The path as sent, spelling and all (a history sends /TRANSFERS/ too): the grade's host was a socket's.
  const path = r.url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '') || '/'
  const parts = ['curl -sS -i', `-X ${shellQuote(r.method)}`, word([...url, path])]
  for (const [k, v] of Object.entries(r.headers)) parts.push(`-H ${word(substituted(`${k}: ${v}`, names))}`)
  let respelled = false
  if (r.body !== undefined) {
    const plain = plainLiterals(r.body, names)
    respelled = plain.respelled
    parts.push(`--data-raw ${word(substituted(plain.body, names))}`)
  }
  return { command: parts.join(' '), respelled }
}

/** What a step does, from its operation; a step recorded without one (the end of a history) by what it says. */
export function kindOf(s: Step): Op['op'] | 'send' | 'other' {
  const op = s.op?.op
  if (op === 'top-up' || op === 'drain' || op === 'send') return 'send'
  if (op) return op
  const what = String(s.what)
  if (what === 'the core holds') return 'hold'
  if (what === 'the core releases') return 'release'
  if (what.startsWith('the core lets')) return 'let-go'
  if (what === 'the core will fail once') return 'core-fails'
  if (what.startsWith('the clock moves')) return 'clock'
  if (what === 'SIGKILL and restart') return 'crash'
  if (s.exchange) return 'send'
  return 'other'
}

/**
 * Where the grade's clock stood after each step, in ms after the history
 * began, and when it began (ms since the epoch): from the steps' `at`, less
 * the moves the steps made (their `clock`, "+N ms …"); from the moves alone
 * where a step has no `at`.
 */
export function timesOf(steps: Step[]): { start?: number; rel: Map<number, number> } {
  const moved = (s: Step) => Number(/^\+(\d+) ms/.exec(String(s.clock ?? ''))?.[1] ?? 0)
  let start: number | undefined
  let sum = 0
  for (const s of steps) {
    sum += moved(s)
    if (s.at !== undefined) {
      start = s.at - sum
      break
    }
  }
  const rel = new Map<number, number>()
  let last = 0
  for (const s of steps) {
    const known = s.at !== undefined && start !== undefined ? s.at - start : undefined
    // A clock text that says nothing of how far it moved leaves the time unknown from there on, unless an `at` says.
    if (known === undefined && s.clock && !/^\+\d+ ms/.test(String(s.clock))) last = Number.NaN
    last = known ?? last + moved(s)
    if (!Number.isNaN(last)) rel.set(s.index, last)
  }
  return { ...(start !== undefined ? { start } : {}), rel }
}

/** The replay as a shell script: written beside the history's page as timelineScriptName(f), and offered by the page for download. */
export function timelineScript(f: ShownFailure): string {
  return replayOf(f).script
}

// Starts one bank process for a stage, the way a learner would run it, and
// knows how to stop it, crash it and bring it back on the same database.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { dirname, join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Agent, request } from 'undici'
import { confinementArgs } from './confinement.ts'
import type { GradeClock } from './gradeClock.ts'
import type { Endpoint } from './http.ts'
import { childEnv, signalGroup, stopGroup, track } from './processes.ts'
import { repoRoot } from './paths.ts'
import type { Phrase } from './i18n/phrase.ts'
import { countersNote, readLimitCounters, stuckAtLimit } from './limitCounters.ts'
import { releasePidsCgroup } from './limits.ts'
import { type SandboxedCommand, sandboxed, type SandboxSpec } from './sandbox.ts'
import { KeptLog, ListeningWatch } from './serverLog.ts'
import { commandSandbox, type ServerCommand } from './serverCommand.ts'
import { asNobody } from './unprivileged.ts'

export type ServerOptions = {
  stageDir: string
  dbPath: string
  adminToken: string
  /** Extra LAB_* settings, e.g. { LAB_PROCESSING_DELAY_MS: '200' }. */
  env?: Record<string, string>
  /** The script to run under tsx instead of bank/main.ts (the grader's self-tests use this). */
  entry?: string
  /** The bank and the stage's layer as one bundle (serverBuild.ts), run with plain node instead of bank/main.ts under tsx. */
  bundle?: string
  /** Ceiling for a server that is alive but still starting (default: startCeilingMs()). */
  startTimeoutMs?: number
  /**
   * Run under Node's permission model as this stage's code (confinement.ts):
   * it reads its own folder, bank/ and earlier stages' given/ only. Used when
   * there is no sandbox; inside one, solutions/ is not there at all.
   */
  confineAsStage?: number
  /** Run it in a sandbox (sandbox.ts): no network, so it listens on a Unix socket next to its database. */
  sandbox?: SandboxSpec
  /** Without a sandbox, run it as nobody (isolation.ts, "user"): the grader is root, and its database folder is nobody's. */
  asUser?: boolean
  /** It must live on after the grader exits (--keep): as nobody, the kernel must not kill it with its parent. */
  outlivesGrader?: boolean
  /** A server of any language (`--server CMD`) instead of bank/main.ts; same environment, same handling. */
  command?: ServerCommand
  /** The grade's timeline: every start stands at its moment, and it moves the server from then on (gradeClock.ts). */
  clock?: GradeClock
  /**
   * A warm process to become instead of spawning one at a (re)start: a
   * process of the same build, already started and given this instance's
   * settings and database (the grade's instance pool keeps one ready), or
   * undefined when there is none.
   */
  warm?: (server: ServerProcess) => Promise<ServerProcess | undefined>
}

export class ServerStartError extends Error {
  constructor(
    message: string,
    /** The limit it is stuck at, in the learner's language (the message holds its English). */
    readonly limit?: Phrase,
  ) {
    super(message)
  }
}

/** How a ServerStartError begins when the server is alive but stuck at a limit; the limit's sentence follows, to the line's last '.'. */
export const STUCK_AT_LIMIT = 'the server is stuck at a limit: '

/**
 * How long a server that is alive but still starting is waited for. A crash
 * while starting is noticed at once, whatever this says: the ceiling only has
 * to cover a slow machine (tsx compiling on a loaded laptop, a roster batch),
 * so it is generous. LAB_START_TIMEOUT_S overrides it.
 */
export function startCeilingMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.LAB_START_TIMEOUT_S)
  return env.LAB_START_TIMEOUT_S && seconds > 0 ? seconds * 1000 : 60_000
}

/** Every start gets a socket name of its own: a killed server leaves its socket file behind. */
let sockets = 0

/** Only what the server needs: a learner's server gets no secrets of ours. Port 0: the OS picks a free one. */
export function serverEnv(options: ServerOptions, port = 0): Record<string, string> {
  return childEnv({
    NODE_ENV: 'test',
    LAB_HOST: '127.0.0.1',
    LAB_PORT: String(port),
    LAB_DB: options.dbPath,
    LAB_ADMIN_TOKEN: options.adminToken,
    LAB_STAGE_DIR: options.stageDir,
    ...(confinedStage(options) === undefined ? {} : { TMPDIR: ownFolder(options) }),
    ...(options.sandbox ? { LAB_SOCKET: join(ownFolder(options), `s${process.pid}-${++sockets}.sock`) } : {}),
    ...options.env,
  })
}

/** The grader's own scenario servers (entry) are not learner code: never confined. */
const confinedStage = (options: ServerOptions) => (options.entry === undefined && !options.command ? options.confineAsStage : undefined)
const entryOf = (options: ServerOptions) => options.bundle ?? resolve(repoRoot, options.entry ?? 'bank/main.ts')
/** Its database's folder: also its TMPDIR (tsx's cache) when confined, so it writes nowhere else. */
const ownFolder = (options: ServerOptions) => dirname(options.dbPath)

/** The node arguments of the server (the permission model's flags first, when confined). */
export function serverArgs(options: ServerOptions): string[] {
  const permissions =
    confinedStage(options) === undefined
      ? []
      : confinementArgs({
          stage: confinedStage(options)!,
          readable: [options.stageDir, ...(options.bundle ? [dirname(options.bundle)] : [])],
          writable: [ownFolder(options)],
          cwd: options.stageDir,
          tsx: !options.bundle,
        })
  return [...permissions, ...(options.bundle ? [] : ['--import', 'tsx']), entryOf(options)]
}

/** A confined server runs in its own stage folder: the course root is not readable to it. */
export const serverCwd = (options: ServerOptions) =>
  options.command ? options.command.cwd : confinedStage(options) === undefined ? repoRoot : options.stageDir

/** The program and argv that start the server: node itself (or the --server command), bwrap around it, or setpriv (as nobody). */
export function serverCommand(options: ServerOptions, env: Record<string, string>): SandboxedCommand {
  const { command } = options
  if (options.asUser && !options.sandbox)
    return asNobody(command ? { file: command.argv[0]!, args: command.argv.slice(1) } : { file: process.execPath, args: serverArgs(options) }, {
      outlivesGrader: options.outlivesGrader,
    })
  if (command) {
    const spec = options.sandbox && commandSandbox(options.sandbox, command)
    return sandboxed(spec, env, command.argv, { graceful: true, chdir: command.cwd, path: spec ? spec.path : undefined })
  }
  const sandbox = options.sandbox && { ...options.sandbox, readOnly: [...options.sandbox.readOnly, dirname(entryOf(options))] }
  return sandboxed(sandbox, env, [process.execPath, ...serverArgs(options)], { graceful: true })
}

export class ServerProcess {
  url = ''
  /** Set when it listens on a Unix socket, with the agent that talks over it. */
  private socket: { path: string; agent: Agent } | undefined
  private child: ChildProcess | undefined
  /** What holds the current process: its limits and pids cgroup (none unsandboxed). */
  private held: Pick<SandboxedCommand, 'cgroup' | 'limits'> = {}
  /** Settles once the current process's pids cgroup is removed (its last process gone): stop() waits for it. */
  private cgroupGone: Promise<unknown> = Promise.resolve()
  /** What failures show of its output, all its processes' in turn: the start and the end, however much it printed (serverLog.ts). */
  private readonly log = new KeptLog()
  /** The current process's "listening on" line: a new watch per process, so a restart never finds the old line. */
  private listening = new ListeningWatch()
  /** True while we are stopping or crashing it on purpose. */
  private stopping = false
  /** Whom the current process's output and exit are told to: this server, or the one that took the process over (takeOver). */
  private listener: { to: ServerProcess } = { to: this }
  /** Set when the process exits on its own (not by stop or crash). */
  unexpectedExit: string | undefined
  /** Wakes a start that waits for the "listening" line: called when its output changes what the watch says, and on its exit. */
  private wake = () => {}
  /** Resolves once the current process's output has ended (its pipes closed). */
  private outputEnded: Promise<void> = Promise.resolve()
  /** How long the last successful start took, from spawn to GET /health answering 200. */
  lastStartMs = 0
  /** Processes spawned so far: the first start and every restart. */
  starts = 0
  /** It has had a process: a start now is a restart (and a warm process may take it: ServerOptions.warm). */
  private ran = false
  /** Time spent inside start() so far, a start under way included: a check's time limit leaves it out. */
  private startingTotalMs = 0
  private startingSince: number | undefined

  constructor(private current: ServerOptions) {}

  /** How it starts: a restart comes back with these, on the same database. */
  get options(): ServerOptions {
    return this.current
  }

  /**
   * The running process now keeps its data in `dbPath`, with `env`'s
   * settings (the grader renewed it: bank/generations.ts); a restart starts
   * it that way.
   */
  reconfigured(dbPath: string, env: Record<string, string>): void {
    this.current = { ...this.current, dbPath, env }
  }

  /** The last lines the server printed: shown with failures. */
  logTail(lines = 15): string {
    return this.log.tail(lines)
  }

  get alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null
  }

  /** Resolves true if the process exits within `ms` (a connection error often arrives before the exit event). */
  async exitsWithin(ms: number): Promise<boolean> {
    const child = this.child
    if (!child || !this.alive) return true
    return Promise.race([once(child, 'exit').then(() => true), sleep(ms).then(() => false)])
  }

  /** Where requests go: the URL, or the URL over its socket. */
  get endpoint(): Endpoint {
    return this.socket ? { url: this.url, socketPath: this.socket.path, agent: this.socket.agent } : this.url
  }

  get adminToken(): string {
    return this.options.adminToken
  }

  get pid(): number | undefined {
    return this.child?.pid
  }

  /** A start is under way. */
  get isStarting(): boolean {
    return this.startingSince !== undefined
  }

  /** Milliseconds spent starting (finished starts plus the one under way). */
  startingMs(now = performance.now()): number {
    return this.startingTotalMs + (this.startingSince === undefined ? 0 : now - this.startingSince)
  }

  /**
   * Starts the server; after stop() or crash(), again on the same database
   * file (the port may change): a warm process takes its place when the
   * options offer one, a new one is spawned otherwise.
   */
  async start(): Promise<void> {
    const since = performance.now()
    this.startingSince = since
    try {
      const spare = this.ran ? await this.current.warm?.(this) : undefined
      if (spare) this.takeOver(spare)
      else await this.spawnAndWait()
      this.ran = true
      this.lastStartMs = Math.round(performance.now() - since)
    } finally {
      this.startingTotalMs += performance.now() - since
      this.startingSince = undefined
    }
  }

  private async spawnAndWait(): Promise<void> {
    const { options } = this
    this.starts++
    const timeoutMs = options.startTimeoutMs ?? startCeilingMs()
    // A restarted instance stands at the timeline's moment of its restart, not of its first start.
    const startedAt = options.clock?.now()
    const env = { ...serverEnv(options), ...options.clock?.env() }
    const { file, args, cgroup, limits } = serverCommand(options, env)
    const child = spawn(file, args, {
      cwd: serverCwd(options),
      env,
      detached: true, // its own process group, so stop() reaches grandchildren too
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child = child
    this.held = { cgroup, limits }
    this.unexpectedExit = undefined
    track(child)
    // Every chunk is drained and read at once, in time proportional to its size: a flood never stalls the server nor the verdict.
    const listening = (this.listening = new ListeningWatch())
    const listener = (this.listener = { to: this as ServerProcess })
    const noticed = (changed: boolean) => {
      if (changed && listener.to.listening === listening) listener.to.wake()
    }
    for (const stream of ['stdout', 'stderr'] as const) {
      child[stream]!.on('data', (chunk: Buffer) => {
        listener.to.log.append(chunk)
        noticed(listening.feed(stream, chunk))
      })
      child[stream]!.once('end', () => noticed(listening.end(stream)))
    }
    this.outputEnded = new Promise((resolve) => child.once('close', () => resolve()))
    // Its pids cgroup (limits.ts) is removed once the sandbox's last process is gone.
    this.cgroupGone = new Promise((resolve) => child.once('exit', () => resolve(releasePidsCgroup(cgroup))))
    child.once('exit', (code, signal) => {
      const owner = listener.to
      if (owner.child === child && !owner.stopping) owner.unexpectedExit = signal ? `killed by ${signal}` : `exited with code ${code}`
      owner.wake()
    })

    const deadline = Date.now() + timeoutMs
    try {
      this.url = await this.waitForListening(deadline, timeoutMs)
      await this.waitForHealth(deadline, timeoutMs)
      await options.clock?.follow(this, startedAt!)
    } catch (error) {
      await this.stop()
      throw error
    }
  }

  /**
   * Becomes `spare`'s running process: from now on its output, its exit and
   * its address are this server's, and `spare` has none. Its log so far (its
   * start) is carried over, so this server's log still shows the start.
   */
  private takeOver(spare: ServerProcess): void {
    void this.socket?.agent.close()
    this.log.append(spare.log.text())
    Object.assign(this, {
      child: spare.child,
      held: spare.held,
      cgroupGone: spare.cgroupGone,
      url: spare.url,
      socket: spare.socket,
      listening: spare.listening,
      outputEnded: spare.outputEnded,
    })
    this.listener = spare.listener
    this.listener.to = this
    this.unexpectedExit = undefined
    Object.assign(spare, { child: undefined, socket: undefined, listener: { to: spare } })
  }

  private async waitForListening(deadline: number, timeoutMs: number): Promise<string> {
    const seconds = timeoutMs / 1000
    for (;;) {
      const address = this.listening.address()
      if (address?.startsWith('unix:')) {
        void this.socket?.agent.close()
        const path = address.slice('unix:'.length)
        this.socket = { path, agent: new Agent({ connect: { socketPath: path } }) }
        return 'http://localhost'
      }
      if (address) return address
      if (!this.alive) {
        await this.lastOutput()
        throw new ServerStartError(`the server ${this.unexpectedExit ?? 'exited'} before it listened.\n${this.logTail()}`)
      }
      if (Date.now() > deadline) throw this.atCeiling(`did not print "listening on http://127.0.0.1:PORT" within ${seconds} s`)
      const settles = this.listening.settlesIn()
      await this.outputOrExit(Math.min(deadline - Date.now(), settles ?? Infinity))
      // A line that may be unfinished counts only if the stream stayed quiet: let the
      // event loop read what the pipes hold first (a timer runs before that read).
      if (settles !== undefined) await new Promise((resolve) => setImmediate(resolve))
    }
  }

  /**
   * Resolves when the server prints something or exits (or after `ms`): the
   * "listening" line is seen the moment it arrives, not at a polling tick.
   */
  private outputOrExit(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(ms, 0) + 1)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wake = done
    })
  }

  /** A process that exited may still have output in its pipes: the error shows its last lines (a moment at most). */
  private lastOutput(): Promise<unknown> {
    return Promise.race([this.outputEnded, sleep(250)])
  }

  private async waitForHealth(deadline: number, timeoutMs: number): Promise<void> {
    let last = 'no answer'
    while (Date.now() < deadline) {
      if (!this.alive) {
        await this.lastOutput()
        throw new ServerStartError(`the server ${this.unexpectedExit} while starting.\n${this.logTail()}`)
      }
      try {
        const res = await request(`${this.url}/health`, { dispatcher: this.socket?.agent, headersTimeout: 1_000, bodyTimeout: 1_000 })
        const text = await res.body.text()
        if (res.statusCode === 200) return
        last = `HTTP ${res.statusCode}: ${text.slice(0, 200)}`
      } catch (error) {
        last = (error as Error).message
      }
      // It already printed that it listens: an answer is usually a moment away.
      await sleep(25)
    }
    throw this.atCeiling(`GET /health never answered 200 within ${timeoutMs / 1000} s (last: ${last})`)
  }

  /**
   * The error of a start that reached its ceiling with the process alive.
   * Read now, while its processes live: one stuck at a limit (limitCounters.ts)
   * is told apart from one that is merely slow, and the error says which.
   */
  private atCeiling(what: string): ServerStartError {
    const { limits, cgroup } = this.held
    const counters = limits && this.child?.pid !== undefined && this.alive ? readLimitCounters(this.child.pid, cgroup) : undefined
    const limit = counters && stuckAtLimit(counters, limits!)
    const log = this.logTail() ? `\n${this.logTail()}` : ''
    if (limit) return new ServerStartError(`${STUCK_AT_LIMIT}${limit}.\nIt is still running, but ${what}.${log}`, limit)
    const below = counters ? `; it is below every limit (${countersNote(counters, limits!)})` : ''
    return new ServerStartError(`the server is still running but ${what} (the start-up ceiling; LAB_START_TIMEOUT_S raises it)${below}.${log}`)
  }

  /** Graceful stop: SIGTERM to the group, SIGKILL after a grace period; done once its pids cgroup is gone too. */
  async stop(): Promise<void> {
    if (!this.child) return
    this.stopping = true
    await stopGroup(this.child)
    await this.cgroupGone
    this.stopping = false
  }

  /** A real crash: SIGKILL, no chance to clean up or finish in-flight work. */
  async crash(): Promise<void> {
    if (!this.child || !this.alive) return
    this.stopping = true
    const exited = once(this.child, 'exit')
    signalGroup(this.child, 'SIGKILL')
    await exited
    this.stopping = false
  }
}

// Starts one bank process for a stage, the way a learner would run it, and
// knows how to stop it, crash it and bring it back on the same database.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { dirname, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { request } from 'undici'
import { confinementArgs } from './confinement.ts'
import { childEnv, signalGroup, stopGroup, track } from './processes.ts'
import { repoRoot } from './paths.ts'

export type ServerOptions = {
  stageDir: string
  dbPath: string
  adminToken: string
  /** Extra LAB_* settings, e.g. { LAB_PROCESSING_DELAY_MS: '200' }. */
  env?: Record<string, string>
  /** The script to run instead of bank/main.ts (the grader's self-tests use this). */
  entry?: string
  startTimeoutMs?: number
  /**
   * Run under Node's permission model as this stage's code (confinement.ts):
   * it reads its own folder, bank/ and earlier stages' given/ only.
   */
  confineAsStage?: number
}

export class ServerStartError extends Error {}

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/
const LOG_LIMIT = 64 * 1024

export class ServerProcess {
  url = ''
  private child: ChildProcess | undefined
  private logText = ''
  /** Output of the current process only: a restart must not find the old "listening on" line. */
  private sinceStart = ''
  /** True while we are stopping or crashing it on purpose. */
  private stopping = false
  /** Set when the process exits on its own (not by stop or crash). */
  unexpectedExit: string | undefined

  constructor(readonly options: ServerOptions) {}

  /** The last lines the server printed: shown with failures. */
  logTail(lines = 15): string {
    return this.logText.trimEnd().split('\n').slice(-lines).join('\n')
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

  get pid(): number | undefined {
    return this.child?.pid
  }

  async start(): Promise<void> {
    const { options } = this
    const timeoutMs = options.startTimeoutMs ?? 10_000
    // Only what the server needs: a learner's server gets no secrets of ours.
    const env = childEnv({
      NODE_ENV: 'test',
      LAB_HOST: '127.0.0.1',
      LAB_PORT: '0',
      LAB_DB: options.dbPath,
      LAB_ADMIN_TOKEN: options.adminToken,
      LAB_STAGE_DIR: options.stageDir,
      ...options.env,
    })
    const entry = resolve(repoRoot, options.entry ?? 'bank/main.ts')
    // The grader's own scenario servers (entry) are not learner code: not confined.
    const confined = options.confineAsStage !== undefined && options.entry === undefined
    const own = dirname(options.dbPath) // its database, and tsx's cache (TMPDIR): nobody else's
    const permissions = confined
      ? confinementArgs({ stage: options.confineAsStage!, readable: [options.stageDir], writable: [own], cwd: options.stageDir })
      : []
    const child = spawn(process.execPath, [...permissions, '--import', 'tsx', entry], {
      cwd: confined ? options.stageDir : repoRoot,
      env: confined ? { ...env, TMPDIR: own } : env,
      detached: true, // its own process group, so stop() reaches grandchildren too
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    this.child = child
    this.unexpectedExit = undefined
    track(child)
    this.sinceStart = ''
    const append = (chunk: Buffer) => {
      const text = chunk.toString('utf8')
      this.logText = (this.logText + text).slice(-LOG_LIMIT)
      if (this.sinceStart.length < LOG_LIMIT) this.sinceStart += text
    }
    child.stdout!.on('data', append)
    child.stderr!.on('data', append)
    child.once('exit', (code, signal) => {
      if (this.child === child && !this.stopping)
        this.unexpectedExit = signal ? `killed by ${signal}` : `exited with code ${code}`
    })

    const deadline = Date.now() + timeoutMs
    try {
      this.url = await this.waitForListening(deadline)
      await this.waitForHealth(deadline)
    } catch (error) {
      await this.stop()
      throw error
    }
  }

  private async waitForListening(deadline: number): Promise<string> {
    const seconds = Math.round((deadline - Date.now()) / 1000)
    for (;;) {
      const match = LISTENING.exec(this.sinceStart)
      if (match) return match[1]!
      if (!this.alive)
        throw new ServerStartError(`the server ${this.unexpectedExit ?? 'exited'} before it listened.\n${this.logTail()}`)
      if (Date.now() > deadline)
        throw new ServerStartError(
          `the server did not print "listening on http://127.0.0.1:PORT" within ${seconds} s.\n${this.logTail()}`,
        )
      await sleep(25)
    }
  }

  private async waitForHealth(deadline: number): Promise<void> {
    let last = 'no answer'
    while (Date.now() < deadline) {
      if (!this.alive) throw new ServerStartError(`the server ${this.unexpectedExit} while starting.\n${this.logTail()}`)
      try {
        const res = await request(`${this.url}/health`, { headersTimeout: 1_000, bodyTimeout: 1_000 })
        const text = await res.body.text()
        if (res.statusCode === 200) return
        last = `HTTP ${res.statusCode}: ${text.slice(0, 200)}`
      } catch (error) {
        last = (error as Error).message
      }
      await sleep(100)
    }
    throw new ServerStartError(`GET /health never answered 200 (last: ${last}).\n${this.logTail()}`)
  }

  /** Graceful stop: SIGTERM to the group, SIGKILL after a grace period. */
  async stop(): Promise<void> {
    if (!this.child) return
    this.stopping = true
    await stopGroup(this.child)
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

  /** Start again on the same database file (the port may change). */
  async restart(): Promise<void> {
    await this.start()
  }
}

// One grade's timeline. The grader owns the clock its servers read (bank/clock.ts)
// and the clock of its PostgreSQL database (pgClock.ts): every instance and the
// database stand at the same moment (each instance plus its own skew), and
// move only when a check moves them. A lease or a TTL check then places its
// requests at exact moments, the last millisecond inside a boundary and the
// first outside it, in no wall time and whatever the machine's load.
//
// A real timeline is the fallback: a --server that offers no PUT /admin/clock,
// or a check run again on the host clock because the layer read a clock the
// grader cannot move. Then moving the clock means waiting for it.
import { setTimeout as sleep } from 'node:timers/promises'
import { putClock } from './adminRoutes.ts'
import type { Endpoint } from './http.ts'

/** What the timeline moves: a running instance (its admin route), or a database. */
export type ClockedInstance = { readonly alive: boolean; readonly endpoint: Endpoint; readonly adminToken: string }
export type ClockedDatabase = { setClock(nowMs: number | undefined): Promise<void> }

export class GradeClock {
  private nowMs: number
  private readonly instances = new Set<ClockedInstance>()
  private readonly databases = new Set<ClockedDatabase>()

  /**
   * `controlled`: the servers stand still until moved. It starts at a whole
   * second (Retry-After and the policy header count whole seconds).
   */
  constructor(
    private isControlled: boolean,
    startMs = Math.ceil(Date.now() / 1000) * 1000,
  ) {
    this.nowMs = startMs
  }

  get controlled(): boolean {
    return this.isControlled
  }

  /** A server that cannot have its clock moved (a --server without PUT /admin/clock): the grade waits on real time. */
  useRealTime(): void {
    this.isControlled = false
    this.instances.clear()
    this.databases.clear()
  }

  /** The timeline's moment: the instances' Date.now() (less their skew) and the database's now(). */
  now(): number {
    return this.controlled ? this.nowMs : Date.now()
  }

  /** The settings a new or restarted instance starts with: standing at the timeline's moment. */
  env(): Record<string, string> {
    return this.controlled ? { LAB_CLOCK_NOW_MS: String(this.nowMs) } : {}
  }

  /**
   * An instance that just started on this timeline, standing at `startedAt`
   * (what env() gave it); the timeline moves it from now on. A move made
   * while it was starting (a spare starts while a check runs) is made up for
   * now: it never stands behind the timeline it follows.
   */
  async follow(instance: ClockedInstance, startedAt: number): Promise<void> {
    if (!this.controlled) return
    this.instances.add(instance)
    if (this.nowMs > startedAt) await putClock(instance, this.nowMs)
  }

  /** A database whose now() follows the timeline from now on. */
  async followDatabase(database: ClockedDatabase): Promise<void> {
    if (!this.controlled) return
    this.databases.add(database)
    await database.setClock(this.nowMs)
  }

  /** Moves the timeline forward `ms` (or waits that long, on a real timeline). */
  advance(ms: number): Promise<void> {
    return this.moveTo(this.now() + ms)
  }

  /**
   * Moves every database and every running instance to `at`, in that order,
   * so no instance reads a moment its database has not reached. Never back.
   */
  async moveTo(at: number): Promise<void> {
    if (!this.controlled) {
      await sleep(Math.max(0, at - Date.now()))
      return
    }
    if (at <= this.nowMs) return
    this.nowMs = at
    // Each side all at once: a grade has many databases and instances, and each move is a round trip to every one.
    await Promise.all([...this.databases].map((database) => database.setClock(at)))
    await Promise.all([...this.instances].filter((instance) => instance.alive).map((instance) => putClock(instance, at)))
  }
}

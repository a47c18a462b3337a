// The bank processes of one grade. Starting a process costs far more than a
// check (a few hundred milliseconds, seconds on a busy machine), so a grade
// keeps the processes it started and gives each check the instances it asks
// for from them: an idle process becomes the instance wanted by a new
// generation (PUT /admin/instance: these settings, this database; see
// bank/generations.ts), and a process is started only when none is idle.
//
// A whole grade (not one narrowed to a few checks) keeps one spare warm: a
// process of the grade's build, started in the background, that the next
// instance or restart becomes (ServerProcess's `warm`). A restart is still a
// process that was never the crashed one, opening the database anew; it just
// did its booting while the grade went on. The spare is started again each
// time one is taken, so at most one is wasted when the grade ends; a grade
// of a few checks keeps none, and starts what it needs when it needs it.
//
// A server that does not offer PUT /admin/instance (a --server command) gets
// a process of its own for each instance a check asks for, stopped when the
// check ends, as every server did before there was a pool.
import { type Settings, settingsEnv } from '#bank/config.ts'
import { offersRenewal, renewInstance, resetCore } from '#harness/adminRoutes.ts'
import type { GradeClock } from '#harness/gradeClock.ts'
import type { ServerProcess } from '#harness/spawnServer.ts'

/** What a check asks for: settings (the rest at the bank's defaults), a database (a file the grade has, or a fresh one), and the clock it runs on. */
export type InstanceRequest = { settings: Partial<Settings>; database: string | 'fresh'; clock: GradeClock }

/** How the pool makes what it needs: the grade's database files, and a process on one of them. */
export type InstanceMaker = {
  sharedDb: string
  newDbPath(): string
  /** The environment that points an instance at `dbPath`'s database (a PostgreSQL database is made on first use). */
  databaseEnv(dbPath: string, clock: GradeClock): Promise<Record<string, string>>
  /** The name PUT /admin/instance takes for `dbPath`'s database. */
  databaseName(dbPath: string, clock: GradeClock): Promise<string>
  /** A process (not started) on `dbPath` with these settings; `warm` is what its restarts ask for a warm process. */
  server(
    dbPath: string,
    settings: Partial<Settings>,
    clock: GradeClock,
    warm?: (server: ServerProcess) => Promise<ServerProcess | undefined>,
  ): Promise<ServerProcess>
}

type Member = {
  server: ServerProcess
  clock: GradeClock
  dbPath: string
  settings: Partial<Settings>
  /** Lent to a check; the shared instance always is. */
  lent: boolean
  /** Whether it offers PUT /admin/instance; asked once. */
  renewable?: boolean
}

export class InstancePool {
  private readonly members: Member[] = []
  /** Every process the pool ever made, for the count of starts. */
  private readonly made: ServerProcess[] = []
  /** The grade's clock: the one spares stand on (a check run again on the real clock gets none). */
  private gradeClock: GradeClock | undefined
  /** The warm spare, started or starting; undefined until a grade first needs a second process. */
  private spare: Promise<ServerProcess | undefined> | undefined
  private stopped = false

  /**
   * `spares`: whether to keep one (a whole grade, which needs several
   * processes); a grade of one check (--only) starts what it needs when it
   * needs it, and wastes no process on a spare nobody takes.
   */
  constructor(
    private readonly maker: InstanceMaker,
    private readonly spares: boolean,
  ) {}

  /** Processes spawned for this grade so far: first starts, spares and restarts. */
  get starts(): number {
    return this.made.reduce((sum, server) => sum + server.starts, 0)
  }

  /** The grade's default instance (the defaults, the shared database), made now and started by `start`; never lent to anyone else. */
  async shared(clock: GradeClock): Promise<ServerProcess> {
    this.gradeClock = clock
    const server = await this.make(this.maker.sharedDb, {}, clock)
    this.members.push({ server, clock, dbPath: this.maker.sharedDb, settings: {}, lent: true })
    return server
  }

  /**
   * An instance as `request` asks, lent until `giveBack`: an idle process of
   * the same clock, or the warm spare, renewed into it; or a new one, started.
   */
  async lend(request: InstanceRequest): Promise<ServerProcess> {
    const dbPath = request.database === 'fresh' ? this.maker.newDbPath() : request.database
    for (const member of this.members) {
      if (member.lent || member.clock !== request.clock || !member.server.alive) continue
      member.renewable ??= await offersRenewal(member.server)
      if (!member.renewable) continue
      member.lent = true
      await this.renew(member, dbPath, request.settings)
      return member.server
    }
    const spare = request.clock === this.gradeClock ? await this.takeSpare() : undefined
    if (spare) {
      const member: Member = { server: spare, clock: request.clock, dbPath: this.maker.sharedDb, settings: {}, lent: true, renewable: true }
      this.members.push(member)
      await this.renew(member, dbPath, request.settings)
      return spare
    }
    const server = await this.make(dbPath, request.settings, request.clock)
    const member: Member = { server, clock: request.clock, dbPath, settings: request.settings, lent: true }
    this.members.push(member)
    try {
      await server.start()
    } catch (error) {
      this.members.splice(this.members.indexOf(member), 1)
      throw error
    }
    member.renewable = await offersRenewal(server)
    if (member.renewable && request.clock === this.gradeClock) this.keepSpare()
    return server
  }

  /**
   * The instances a check was lent, idle again; one that died is dropped,
   * and one that cannot be renewed is stopped (the next check gets a
   * process of its own, as its own start would have given it).
   */
  async giveBack(servers: ServerProcess[]): Promise<void> {
    for (const server of servers) {
      const member = this.members.find((m) => m.server === server)
      if (!member) continue
      if (!server.alive || member.renewable === false) await this.drop(member)
      else member.lent = false
    }
  }

  /**
   * The shared instance after a check: its core as it starts (a check that
   * failed while holding it must not hold up the next). Its settings and
   * database never change.
   */
  async tidyShared(server: ServerProcess): Promise<void> {
    const member = this.members.find((m) => m.server === server)
    if (!member || !server.alive) return
    member.renewable ??= await offersRenewal(server)
    if (member.renewable) await resetCore(server, { delayMs: member.settings.processingDelayMs ?? 0 })
  }

  /**
   * Starts the spare now, before any check asks for a second process: for a
   * grade that is sure to (grading.ts says which), so that its first restart
   * or extra instance is as quick as the later ones.
   */
  async warmUp(shared: ServerProcess): Promise<void> {
    const member = this.members.find((m) => m.server === shared)
    if (!member || !shared.alive) return
    member.renewable ??= await offersRenewal(shared)
    if (member.renewable) this.keepSpare()
  }

  /** Every process stopped (the grade is over), but `except`. */
  async stopAll(except?: ServerProcess): Promise<void> {
    this.stopped = true
    const spare = await this.spare
    await Promise.all([...this.members.filter((m) => m.server !== except).map((m) => m.server.stop()), spare?.stop()])
    this.members.length = 0
  }

  /** A new generation of `member`: these settings, on `dbPath`. */
  private async renew(member: Member, dbPath: string, settings: Partial<Settings>): Promise<void> {
    try {
      const database = member.dbPath === dbPath ? undefined : await this.maker.databaseName(dbPath, member.clock)
      await renewInstance(member.server, settings, database)
    } catch (error) {
      // It stopped answering its admin routes: of no use to anyone now.
      await this.drop(member)
      throw error
    }
    // A restart of it (a check's crash) comes back as it is now.
    member.server.reconfigured(dbPath, { ...(await this.maker.databaseEnv(dbPath, member.clock)), ...settingsEnv(settings) })
    Object.assign(member, { dbPath, settings })
  }

  /** A warm process for `server`'s restart, renewed into its settings and database; none for a process off the grade's clock. */
  private async warmFor(server: ServerProcess): Promise<ServerProcess | undefined> {
    const member = this.members.find((m) => m.server === server)
    if (!member || member.clock !== this.gradeClock || member.renewable !== true) return undefined
    const spare = await this.takeSpare()
    this.keepSpare()
    if (!spare) return undefined
    try {
      const database = member.dbPath === this.maker.sharedDb ? undefined : await this.maker.databaseName(member.dbPath, member.clock)
      await renewInstance(spare, member.settings, database)
      return spare
    } catch {
      await spare.stop()
      return undefined
    }
  }

  /** The spare, once started (undefined if there is none, or it did not start); another is started in its place by the caller. */
  private async takeSpare(): Promise<ServerProcess | undefined> {
    const spare = this.spare
    this.spare = undefined
    const server = await spare
    return server?.alive ? server : undefined
  }

  /** Starts a spare in the background, if there is none: on the grade's clock and the shared database, with the defaults. */
  private keepSpare(): void {
    if (!this.spares || this.spare || this.stopped || !this.gradeClock) return
    this.spare = this.make(this.maker.sharedDb, {}, this.gradeClock).then(
      async (server) => {
        await server.start()
        return server
      },
      () => undefined,
    )
    // A spare that did not start is simply no spare: the instance that wanted one starts its own, and says why.
    this.spare = this.spare.catch(() => undefined)
  }

  private async make(dbPath: string, settings: Partial<Settings>, clock: GradeClock): Promise<ServerProcess> {
    const server = await this.maker.server(dbPath, settings, clock, (restarting) => this.warmFor(restarting))
    this.made.push(server)
    return server
  }

  private async drop(member: Member): Promise<void> {
    this.members.splice(this.members.indexOf(member), 1)
    await member.server.stop()
  }
}

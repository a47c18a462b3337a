// The bank processes of one grade. Starting a process costs far more than a
// check (a few hundred milliseconds, seconds on a busy machine), so a grade
// keeps the processes it started and gives each check the instances it asks
// for from them: an idle process becomes the instance wanted by a new
// generation (PUT /admin/instance: these settings, this database; see
// bank/generations.ts), and a process is started only when none is idle. A
// check that crashes an instance restarts it itself: there, the restart is
// the point.
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
  /** A process (not started) on `dbPath` with these settings. */
  server(dbPath: string, settings: Partial<Settings>, clock: GradeClock): Promise<ServerProcess>
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

  constructor(private readonly maker: InstanceMaker) {}

  /** Processes spawned for this grade so far: first starts and restarts. */
  get starts(): number {
    return this.made.reduce((sum, server) => sum + server.starts, 0)
  }

  /** The grade's default instance (the defaults, the shared database), made now and started by `start`; never lent to anyone else. */
  async shared(clock: GradeClock): Promise<ServerProcess> {
    const server = await this.make(this.maker.sharedDb, {}, clock)
    this.members.push({ server, clock, dbPath: this.maker.sharedDb, settings: {}, lent: true })
    return server
  }

  /**
   * An instance as `request` asks, lent until `giveBack`: an idle process of
   * the same clock renewed into it, or a new one, started.
   */
  async lend(request: InstanceRequest): Promise<ServerProcess> {
    const dbPath = request.database === 'fresh' ? this.maker.newDbPath() : request.database
    for (const member of this.members) {
      if (member.lent || member.clock !== request.clock || !member.server.alive) continue
      member.renewable ??= await offersRenewal(member.server)
      if (!member.renewable) continue
      member.lent = true
      try {
        const database = member.dbPath === dbPath ? undefined : await this.maker.databaseName(dbPath, request.clock)
        await renewInstance(member.server, request.settings, database)
      } catch (error) {
        // It stopped answering its admin routes: of no use to anyone now.
        await this.drop(member)
        throw error
      }
      // A restart of it (a check's crash) comes back as it is now.
      member.server.adopt(dbPath, { ...(await this.maker.databaseEnv(dbPath, request.clock)), ...settingsEnv(request.settings) })
      Object.assign(member, { dbPath, settings: request.settings })
      return member.server
    }
    const server = await this.make(dbPath, request.settings, request.clock)
    const member: Member = { server, clock: request.clock, dbPath, settings: request.settings, lent: true }
    this.members.push(member)
    await server.start()
    member.renewable = await offersRenewal(server)
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

  /** Every process stopped (the grade is over). */
  async stopAll(except?: ServerProcess): Promise<void> {
    await Promise.all(this.members.filter((m) => m.server !== except).map((m) => m.server.stop()))
    this.members.length = 0
  }

  private async make(dbPath: string, settings: Partial<Settings>, clock: GradeClock): Promise<ServerProcess> {
    const server = await this.maker.server(dbPath, settings, clock)
    this.made.push(server)
    return server
  }

  private async drop(member: Member): Promise<void> {
    this.members.splice(this.members.indexOf(member), 1)
    await member.server.stop()
  }
}

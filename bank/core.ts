// A stand-in for the core-banking system the transfer must call before it can
// commit. It is where a real transfer spends its time, so it is where the lab
// opens race windows: the grader can slow it down, hold it shut until told to
// go on, or make the next calls fail. It also holds the bank's one fault
// point: crashAfterCommit kills the process between a commit and its answer.
import { setTimeout as sleep } from 'node:timers/promises'

export type CoreSettings = {
  delayMs: number
  hold: boolean
  failNext: number
  /**
   * Armed: the next execute() whose transaction commits kills the process
   * (SIGKILL) right after the commit, before the answer is sent: the money
   * moved, and so did whatever the layer committed with it, but the client
   * never hears of it. A restart starts disarmed.
   */
  crashAfterCommit: boolean
}
export type CoreState = CoreSettings & { inflight: number }

export class CoreBanking {
  private settings: CoreSettings
  private inflight = 0
  private waiting: Array<() => void> = []

  constructor(delayMs: number) {
    this.settings = { delayMs, hold: false, failNext: 0, crashAfterCommit: false }
  }

  /** Resolves 'ok' when the core accepted the movement, 'unavailable' when it failed. */
  async call(): Promise<'ok' | 'unavailable'> {
    this.inflight++
    try {
      if (this.settings.delayMs > 0) await sleep(this.settings.delayMs)
      while (this.settings.hold) await new Promise<void>((resolve) => this.waiting.push(resolve))
      if (this.settings.failNext > 0) {
        this.settings.failNext--
        return 'unavailable'
      }
      return 'ok'
    } finally {
      this.inflight--
    }
  }

  /**
   * The fault point: execute() calls it right after its transaction committed
   * (money moved, any same-transaction completion committed), before it
   * returns the outcome to the layer. When crashAfterCommit is armed the
   * process dies here, as a power cut would take it: SIGKILL, no handler runs,
   * no answer leaves, nothing later in the request runs.
   */
  afterCommit(): void {
    if (!this.settings.crashAfterCommit) return
    process.kill(process.pid, 'SIGKILL')
    // A signal to oneself is delivered before kill() returns; should it not be, still never answer.
    process.exit(137)
  }

  update(change: Partial<CoreSettings>): CoreState {
    this.settings = { ...this.settings, ...change }
    if (!this.settings.hold) for (const resolve of this.waiting.splice(0)) resolve()
    return this.state()
  }

  /** `inflight` counts calls that are inside the core right now: the grader waits on it. */
  state(): CoreState {
    return { ...this.settings, inflight: this.inflight }
  }
}

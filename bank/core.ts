// A stand-in for the core-banking system the transfer must call before it can
// commit. It is where a real transfer spends its time, so it is where the lab
// opens race windows: the grader can slow it down, hold it shut until told to
// go on, or make the next calls fail.
import { setTimeout as sleep } from 'node:timers/promises'

export type CoreSettings = { delayMs: number; hold: boolean; failNext: number }
export type CoreState = CoreSettings & { inflight: number }

export class CoreBanking {
  private settings: CoreSettings
  private inflight = 0
  private waiting: Array<() => void> = []

  constructor(delayMs: number) {
    this.settings = { delayMs, hold: false, failNext: 0 }
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

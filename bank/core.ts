// A stand-in for the core-banking system the transfer must call before it can
// commit. It is where a real transfer spends its time, so it is where the lab
// opens race windows: the grader can slow it down, hold it shut until told to
// go on, hold one call alone and let it go (or fail) later, or make the next
// calls fail. It also holds the bank's one fault point: crashAfterCommit
// kills the process between a commit and its answer.
import { setTimeout as sleep } from 'node:timers/promises'

export type CoreSettings = {
  delayMs: number
  hold: boolean
  /**
   * The next calls that arrive, this many, are each held on their own, under
   * a number (`held`), until `letGo` names it: one request waits in the core
   * while others, a takeover of its key say, go through.
   */
  holdNext: number
  failNext: number
  /**
   * Armed: the next execute() whose transaction commits kills the process
   * (SIGKILL) right after the commit, before the answer is sent: the money
   * moved, and so did whatever the layer committed with it, but the client
   * never hears of it. A restart starts disarmed.
   */
  crashAfterCommit: boolean
}
export type CoreState = CoreSettings & { inflight: number; held: number[] }

/** Lets one call held by `holdNext` go on: into the core as usual, or failing there (nothing committed). */
export type LetGo = { call: number; fails: boolean }

export class CoreBanking {
  private settings: CoreSettings
  private inflight = 0
  private waiting: Array<() => void> = []
  private calls = 0
  /** The calls held one by one, by number: each resolves with whether it fails. */
  private heldAlone = new Map<number, (fails: boolean) => void>()

  constructor(delayMs: number) {
    this.settings = { delayMs, hold: false, holdNext: 0, failNext: 0, crashAfterCommit: false }
  }

  /** Resolves 'ok' when the core accepted the movement, 'unavailable' when it failed. */
  async call(): Promise<'ok' | 'unavailable'> {
    this.inflight++
    try {
      if (this.settings.delayMs > 0) await sleep(this.settings.delayMs)
      if (this.settings.holdNext > 0) {
        this.settings.holdNext--
        const call = ++this.calls
        const fails = await new Promise<boolean>((resolve) => this.heldAlone.set(call, resolve))
        if (fails) return 'unavailable'
      }
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

  /** `hold: false` lets every held call go, those held alone included; `letGo` one of these. */
  update({ letGo, ...change }: Partial<CoreSettings> & { letGo?: LetGo }): CoreState {
    this.settings = { ...this.settings, ...change }
    if (!this.settings.hold) for (const resolve of this.waiting.splice(0)) resolve()
    if (change.hold === false) for (const call of [...this.heldAlone.keys()]) this.let(call, false)
    if (letGo) this.let(letGo.call, letGo.fails)
    return this.state()
  }

  private let(call: number, fails: boolean): void {
    this.heldAlone.get(call)?.(fails)
    this.heldAlone.delete(call)
  }

  /** `inflight` counts calls that are inside the core right now, `held` those held alone: the grader waits on them. */
  state(): CoreState {
    return { ...this.settings, inflight: this.inflight, held: [...this.heldAlone.keys()] }
  }
}

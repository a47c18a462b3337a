// How the runner sorts what a check threw, one class at a time, with no server
// started: the servers are their after-the-fact views (did it die, its log),
// the trace is a list of exchanges.
import { describe, expect, it } from 'vitest'
import { TimeoutError } from '#grader/engine/checkTimer.ts'
import { type ClassifiedFailure, classifyFailure, type ServerView } from '#grader/engine/classifyFailure.ts'
import { CheckFailure } from '#harness/failure.ts'
import type { Exchange } from '#harness/http.ts'
import { ServerStartError } from '#harness/spawnServer.ts'

/** The classification with its message as a result document holds it: in English. */
const inEnglish = (c: ClassifiedFailure) => ({ ...c, message: String(c.message) })

const exchange = (path: string): Exchange => ({ request: { method: 'POST', url: `http://127.0.0.1:1${path}`, headers: {} }, ms: 1 })
const first = exchange('/first')
const last = exchange('/last')
const waiting = exchange('/waiting')

const ONE_LINE = 'listening on http://127.0.0.1:1'
const server = (log: string, unexpectedExit?: string): ServerView => ({ unexpectedExit, logTail: () => log })
const healthy = server(ONE_LINE)
const answered = { recorded: [first, last], unanswered: [] }

describe('classifyFailure', () => {
  it('a check failure: its message and details, and no log when the server only said it listens', () => {
    const error = new CheckFailure('expected one transfer', { exchange: first, expected: '1', got: '2' })
    expect(classifyFailure(error, [healthy], answered)).toEqual({
      status: 'fail',
      message: 'expected one transfer',
      failure: { exchange: first, expected: '1', got: '2' },
    })
  })

  it('a check failure with a server that logged more: the log goes with it', () => {
    const log = `${ONE_LINE}\nPOST /transfers 500`
    const got = classifyFailure(new CheckFailure('wrong status'), [server(log)], answered)
    expect(got).toEqual({ status: 'fail', message: 'wrong status', failure: { serverLog: log } })
  })

  it('a timeout: status timeout, the request still waiting for its answer, and the log', () => {
    const got = inEnglish(classifyFailure(new TimeoutError(4000), [healthy], { recorded: [first, last], unanswered: [waiting] }))
    expect(got).toEqual({
      status: 'timeout',
      message: 'timed out after 4000 ms',
      failure: { exchange: waiting, serverLog: ONE_LINE },
    })
  })

  it('a timeout with nothing in flight shows the last request that ended', () => {
    expect(classifyFailure(new TimeoutError(10), [healthy], answered).failure?.exchange).toBe(last)
  })

  it("a server that crashed: whatever was thrown, the message names the crash and shows that server's log", () => {
    const crashed = server('listening\npanic: the disk is gone', 'killed by SIGKILL')
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { exchange: last })
    expect(inEnglish(classifyFailure(refused, [healthy, crashed], answered))).toEqual({
      status: 'fail',
      message: 'connect ECONNREFUSED (the server killed by SIGKILL during this check)',
      failure: { exchange: last, serverLog: 'listening\npanic: the disk is gone' },
    })
  })

  it('an extra instance that did not start: an error (the check reached no verdict), with the shared log', () => {
    const got = classifyFailure(new ServerStartError('port in use'), [healthy], answered)
    expect(inEnglish(got)).toEqual({
      status: 'error',
      message: 'an extra server instance did not start: port in use',
      failure: { serverLog: ONE_LINE },
    })
  })

  it('a request that failed outright: a failure on its own exchange, else on the last one', () => {
    const reset = Object.assign(new Error('socket hang up'), { exchange: first })
    expect(classifyFailure(reset, [healthy], answered)).toEqual({ status: 'fail', message: 'socket hang up', failure: { exchange: first } })
    expect(classifyFailure(new Error('garbage'), [healthy], answered).failure).toEqual({ exchange: last })
  })
})

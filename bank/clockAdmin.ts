// GET/PUT /admin/clock: the grader reads and moves this instance's clock
// (clock.ts). Every instance of a grade is moved to the same timeline value;
// each adds its own LAB_CLOCK_OFFSET_MS.
import type { Express, RequestHandler } from 'express'
import { z } from 'zod'
import { processClock } from './clock.ts'
import { LATEST_INSTANT_MS } from './config.ts'
import { HttpProblem, jsonOutcome, problem, writeOutcome as send } from './problem.ts'

const ClockUpdate = z.strictObject({ nowMs: z.number().int().min(0).max(LATEST_INSTANT_MS) })

export function clockAdmin(app: Express, admin: RequestHandler, parse: <S extends z.ZodType>(schema: S, body: unknown) => z.infer<S>) {
  app.get('/admin/clock', admin, (_req, res) => send(res, jsonOutcome(200, processClock().state())))
  app.put('/admin/clock', admin, (req, res) => {
    const { nowMs } = parse(ClockUpdate, req.body)
    const clock = processClock()
    const { controlled, nowMs: standing, offsetMs } = clock.state()
    if (!controlled)
      throw new HttpProblem(
        problem(
          409,
          'clock-not-controlled',
          'The clock is the host clock',
          "This instance was not started by the grader (LAB_CLOCK_NOW_MS with the grader's admin token): its clock cannot be moved.",
        ),
      )
    if (nowMs < standing)
      throw new HttpProblem(
        problem(
          409,
          'clock-never-goes-back',
          'The clock never goes back',
          `The clock stands at ${standing}; ${nowMs} is earlier. A moment once passed stays passed.`,
          {
            members: { nowMs: standing },
          },
        ),
      )
    // The timeline plus this instance's skew is what its Date shows: it must be a date.
    if (!(Math.abs(nowMs + offsetMs) <= LATEST_INSTANT_MS)) {
      const message = `${nowMs} plus this instance's offset (${offsetMs} ms) is past the latest date`
      throw new HttpProblem(problem(400, 'invalid-body', 'Invalid request body', `nowMs: ${message}`, { members: { errors: [{ path: 'nowMs', message }] } }))
    }
    send(res, jsonOutcome(200, clock.set(nowMs)))
  })
}

// GET/PUT /admin/clock: the grader reads and moves this instance's clock
// (clock.ts). Every instance of a grade is moved to the same timeline value;
// each adds its own LAB_CLOCK_OFFSET_MS.
import type { Express, RequestHandler } from 'express'
import { z } from 'zod'
import { processClock } from './clock.ts'
import { HttpProblem, jsonOutcome, problem, writeOutcome as send } from './problem.ts'

const ClockUpdate = z.strictObject({ nowMs: z.number().int().min(0) })

export function clockAdmin(app: Express, admin: RequestHandler, parse: <S extends z.ZodType>(schema: S, body: unknown) => z.infer<S>) {
  app.get('/admin/clock', admin, (_req, res) => send(res, jsonOutcome(200, processClock().state())))
  app.put('/admin/clock', admin, (req, res) => {
    const { nowMs } = parse(ClockUpdate, req.body)
    const clock = processClock()
    if (!clock.state().controlled)
      throw new HttpProblem(
        problem(409, 'clock-not-controlled', 'The clock is the host clock', 'This instance was started without LAB_CLOCK_NOW_MS: its clock cannot be moved.'),
      )
    send(res, jsonOutcome(200, clock.set(nowMs)))
  })
}

// What every stage's key table shares with the bank: how a lost race on the
// key's constraint shows itself, and the error that rolls the money back when
// a claim was lost. Given to every stage from 1 on, so no stage has to take
// them from another stage's folder.
import Database from 'better-sqlite3'

/** better-sqlite3 raises a SqliteError with one of these codes when the INSERT hits the key's constraint. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Database.SqliteError && (error.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || error.code === 'SQLITE_CONSTRAINT_UNIQUE')
}

/** Thrown inside the money transaction when this request no longer owns its key: rolls the transfer back. */
export class ClaimLostError extends Error {}

// Stage 0 exercise: find the copies a retry left in the ledger.
//
// The unprotected bank executes every retry. Afterwards, all an operator has is
// the ledger table (see bank/db.ts):
//
//   ledger(seq, id, kind, client_id, from_account, to_account, amount, created_at)
//
// A *suspected copy* is a row for which an EARLIER row (smaller seq) has the
// same kind, client_id, from_account, to_account and amount, and was created
// at most 60 seconds before it. Deposits have from_account NULL: compare with
// IS, not =, so NULL matches NULL.
//
// The grader runs your query read-only on two databases (a ledger it crafted,
// with honest repeats and near misses, and the live one) and expects one row
// per copy, with the copy's id in a column named `id`. The original row of each
// pair is not a copy.

// TODO: replace this query with one that returns the id of every suspected copy.
export const SUSPECTED_DUPLICATES_SQL = `
  SELECT id FROM ledger WHERE 0
`

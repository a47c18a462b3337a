// Stage 0 exercise, solved: find the copies a retry left in the ledger.
//
// A self-join: `copy` is flagged when some `original` came first with the same
// kind, client, accounts and amount, at most 60 seconds before. julianday()
// turns ISO 8601 text into days, so the window is 60.0 / 86400. `IS` instead of
// `=` makes NULL (a deposit's from_account) match NULL. DISTINCT because a copy
// of a copy matches more than one earlier row.
export const SUSPECTED_DUPLICATES_SQL = `
  SELECT DISTINCT copy.id
  FROM ledger AS copy
  JOIN ledger AS original
    ON  original.seq < copy.seq
    AND original.kind = copy.kind
    AND original.client_id = copy.client_id
    AND original.from_account IS copy.from_account
    AND original.to_account = copy.to_account
    AND original.amount = copy.amount
    AND julianday(copy.created_at) - julianday(original.created_at) BETWEEN 0 AND 60.0 / 86400
`

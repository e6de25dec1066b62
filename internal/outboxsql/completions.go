package outboxsql

// The completed table of CompleteTx (version 2 of the schema): a row per
// job completed in its handler's transaction, keyed by the job's ID.

// Complete is the statement that records, in the handler's transaction,
// that the job $1 was completed by attempt $2 under reservation token
// $3. A second row for the job fails on the primary key, aborting that
// transaction: only one attempt's effects commit.
func Complete(table string) string {
	return "INSERT INTO " + Completions(table) + " (id, attempt, token) VALUES ($1, $2, $3)"
}

// Completed is the statement that reads whether the job $1 has a row.
func Completed(table string) string {
	return "SELECT EXISTS (SELECT 1 FROM " + Completions(table) + " WHERE id = $1)"
}

// Prune is the statement that deletes the rows older than $1 ms, by the
// database's clock.
func Prune(table string) string {
	return "DELETE FROM " + Completions(table) + " WHERE completed_at < clock_timestamp() - $1 * interval '1 millisecond'"
}

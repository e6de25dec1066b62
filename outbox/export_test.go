package outbox

// CrashAfterPush makes r's next RelayOnce calls stop after the push,
// before the rows are deleted, with err (nil to stop no more).
func (r *Relay) CrashAfterPush(err error) {
	r.afterPush = nil
	if err != nil {
		r.afterPush = func() error { return err }
	}
}

// AfterPush makes r call f after each push, before the rows are deleted;
// an error from f ends RelayOnce there.
func (r *Relay) AfterPush(f func() error) { r.afterPush = f }

// CrashAfterCommit makes r's next RelayOnce calls stop after the rows
// are deleted, before their marks are released.
func (r *Relay) CrashAfterCommit(err error) {
	r.afterCommit = nil
	if err != nil {
		r.afterCommit = func() error { return err }
	}
}

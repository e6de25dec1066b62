package runtime

// EncodeStored is encodeStored, for the tests and benchmarks of package
// runtime_test.
func (e *Envelope) EncodeStored(queue string) ([]byte, error) { return e.encodeStored(queue) }

// IDTime is idTime, for the tests of package runtime_test.
func IDTime(id string) (int64, bool) { return idTime(id) }

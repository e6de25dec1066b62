package runtime

// EncodeStored is encodeStored, for the tests and benchmarks of package
// runtime_test.
func (e *Envelope) EncodeStored(queue string) ([]byte, error) { return e.encodeStored(queue) }

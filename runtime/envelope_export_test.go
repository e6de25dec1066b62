package runtime

// IDTime is idTime, for the tests of package runtime_test.
func IDTime(id string) (int64, bool) { return idTime(id) }

package harness

// Scale picks a figure for the mode the suite runs in: ci in the default
// build, which CI runs under -race on every push, and long with the
// faults_long build tag, which runs the full figures.
func Scale[T any](ci, long T) T {
	if Long {
		return long
	}
	return ci
}

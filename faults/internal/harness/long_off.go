//go:build !faults_long

package harness

// Long is true in the long build (-tags faults_long).
const Long = false

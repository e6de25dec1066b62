//go:build !unix

package cputime

import (
	"errors"
	"time"
)

// Process is the CPU time this process has used, user and system. It is
// read on Unix only.
func Process() (time.Duration, error) {
	return 0, errors.New("process CPU time is read on Unix only")
}

//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the CPU time this process has used, user and system.
func Process() (time.Duration, error) {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0, err
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano()), nil
}

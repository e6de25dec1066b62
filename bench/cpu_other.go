//go:build !unix

package bench

import (
	"errors"
	"time"
)

func processCPU() (time.Duration, error) {
	return 0, errors.New("bench: process CPU time is read on Unix only")
}

//go:build !unix

package jobotel_test

import "time"

func processCPU() (time.Duration, bool) { return 0, false }

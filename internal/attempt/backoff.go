package attempt

import (
	"fmt"
	"time"
)

// Exponential is the delay before the attempt after attempt n that grows
// from base: base * 2^(n-1), capped at max.
func Exponential(base, max time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// ParseBackoff parses a comma-separated list of delays, such as
// "1s,5s,30s". A delay that does not parse, or is negative, is an error
// that names the list.
func ParseBackoff(s string) ([]time.Duration, error) {
	var out []time.Duration
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != ',' {
			continue
		}
		d, err := time.ParseDuration(s[start:i])
		if err != nil {
			return nil, fmt.Errorf("backoff %q: %v", s, err)
		}
		if d < 0 {
			return nil, fmt.Errorf("backoff %q: negative delay %v", s, d)
		}
		out = append(out, d)
		start = i + 1
	}
	return out, nil
}

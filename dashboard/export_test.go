package dashboard

import (
	"net/http"
	"time"
)

// SetClock sets the clock of dashboard h, made by New, for a test.
func SetClock(h http.Handler, now func() time.Time) { h.(*handler).now = now }

// SetScanBytes sets the payload bytes a search across queues of
// dashboard h reads before it stops, for a test.
func SetScanBytes(h http.Handler, n int) { h.(*handler).scanBytes.Store(int64(n)) }

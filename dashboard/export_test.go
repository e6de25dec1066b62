package dashboard

import (
	"net/http"
	"time"
)

// SetClock sets the clock of dashboard h, made by New, for a test.
func SetClock(h http.Handler, now func() time.Time) { h.(*handler).now = now }

package runtime

import "github.com/jobgen/jobgen/internal/send"

// WaitingPushes returns the number of e's pushes waiting for a flight.
func WaitingPushes(e *Engine) int { return e.flights.Waiting() }

// PushFlightsAtOnce is the most flights of pushes in flight at once.
const PushFlightsAtOnce = send.MaxFlights

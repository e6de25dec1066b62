package runtime

// WaitingPushes returns the number of e's pushes waiting for a flight.
func WaitingPushes(e *Engine) int {
	e.flights.mu.Lock()
	defer e.flights.mu.Unlock()
	return len(e.flights.waiting)
}

// PushFlightsAtOnce is the most flights of pushes in flight at once.
const PushFlightsAtOnce = maxPushFlights

package runtime

// Broker is the engine's low-level side: it reserves jobs under a lease
// and settles them by compare-and-set on the reservation's token (ack,
// release, extend, fail), moves due and expired jobs back to ready
// (migrate), and waits for pushes. A Worker does all of this; most
// programs never call a Broker. It is public for workers that run jobs of
// another format on jobgen's engine, such as the Laravel bridge, and for
// tests that drive a reservation by hand.
//
// Every settle acts only if the token it names is still the job's current
// one, and says which refs it no longer held (a *LeaseLostError).
// A Broker holds nothing of its own and is safe for concurrent use.
type Broker struct {
	e *Engine
}

// NewBroker returns the low-level side of e.
func NewBroker(e *Engine) *Broker { return &Broker{e: e} }

// broker is NewBroker, for the engine's and the worker's own use.
func (e *Engine) broker() *Broker { return &Broker{e: e} }

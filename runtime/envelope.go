package runtime

import "github.com/jobgen/jobgen/internal/wire"

// Envelope is what travels through Redis for one job: the job's encoded
// body and the options it was dispatched with, encoded with msgpack.
// Attempt and exception counts are not part of it; they live in Redis
// beside the job, so no script ever decodes a payload. internal/wire
// holds its format.
type Envelope = wire.Envelope

// DecodeEnvelope decodes the payload of job id, read from queue (for a
// partitioned queue, the partition's own name, as in Reservation.Queue).
// The envelope's ID is id and its queue is queue unless the payload names
// another. A truncated, foreign or unknown-version payload, or one
// carrying another ID, returns a *DecodeError carrying id; it never
// panics.
func DecodeEnvelope(queue, id string, payload []byte) (*Envelope, error) {
	return wire.DecodeEnvelope(queue, id, payload)
}

// NewID returns a new job ID: 26 characters, 48 bits of unix ms then 80
// random bits, so IDs sort by creation time.
func NewID() string { return wire.NewID() }

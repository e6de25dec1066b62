package runtime

// nameOf returns the wire name of a failed job whose failure record
// names none: a cancel records its failure before it reads the job
// (cancel.lua), so its record carries no name, but the payload it kept
// does. It returns "" for a payload that does not decode.
func nameOf(queue, id string, payload []byte) string {
	if payload == nil {
		return ""
	}
	env, err := DecodeEnvelope(queue, id, payload)
	if err != nil {
		return ""
	}
	return env.Name
}

// Package progress throttles the writes of a running job's progress
// (Slot): a handler may report as often as it likes, and at most one
// write a second reaches Redis, the first at once and the latest of
// those that came within the second a second after the previous write.
// It also bounds a progress note (CutNote). The write itself is the
// caller's, a func the slot holds.
package progress

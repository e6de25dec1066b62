// Package eviction refuses a Redis that may evict jobgen's keys under
// memory pressure (Check), unless told to accept the risk: an evicted
// job, chain marker, batch record or unique lock is lost without a
// trace. runtime's engine and worker check at their start.
package eviction

// Package histcache keeps the history hashes whose span has ended
// (Cache): the per-minute counts, a hash per hour, and the runtime
// histograms, a hash per queue and ten-minute slot. A hash whose span
// ended a while ago is no longer written to, so a page read again reads
// only the hashes still open.
package histcache

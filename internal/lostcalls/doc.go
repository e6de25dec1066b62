// Package lostcalls keeps the calls whose reply was lost (List): the
// call failed (an error, a timeout, a broken connection) after Redis may
// have run it, and it is to be made again, with the same arguments,
// while the record of its first run may still be there. The engine keeps
// its reserves this way (runtime/reserve_lost.go). A caller pays one
// atomic load (Pending) while no reply was lost.
package lostcalls

// Package phpserial reads and writes PHP's serialize() format, the
// encoding of a queued Laravel job's data.command.
//
// Unlike a map-based decoder it keeps everything a round trip needs:
// class names, property visibility (PHP mangles a private property's
// name as "\x00Class\x00name" and a protected one's as "\x00*\x00name"),
// the order of array entries and properties, and back-references (r:
// and R:). Unmarshal then Marshal gives back the same bytes for every
// input PHP itself writes with the types below.
//
// # Values
//
// A decoded value is one of: nil (N), bool (b), int64 (i), float64 (d),
// string (s, the bytes as they are), *Array (a), *Object (O), Ref (r, a
// second use of an object) and RefVar (R, a PHP reference &$x). Anything
// else (C: custom-serialized objects, E: enums) is refused with an error
// that names it.
//
// # Back-references
//
// PHP numbers the values of a serialization from 1, in the order they
// are written, counting every value except an R; r:N and R:N name value
// N. Resolve finds the value a Ref or RefVar names; an Index numbers
// them all at once, for resolving many.
package phpserial

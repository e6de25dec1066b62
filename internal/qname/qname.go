// Package qname holds the rules for queue names. The runtime checks
// every queue name it is given with them (runtime.ValidateQueueName), and
// the generator checks the queue of each //job: line and of make:job with
// the same rules, without linking the runtime.
package qname

import (
	"errors"
	"fmt"
	"strings"
)

// MaxLen is the longest queue name, in bytes.
const MaxLen = 200

// PartitionSep joins the name of a partitioned queue to the number of a
// partition ("emails#2"). Validate rejects it in a queue name, so a queue
// name never passes for a partition's.
const PartitionSep = "#"

// ListSep separates the queues of a list, such as the one queue:work
// --queue takes ("high,low"), as Laravel's worker does. Validate rejects
// it in a queue name.
const ListSep = ","

// Validate reports why name cannot be used as a queue name, or returns
// nil. A queue name is 1 to MaxLen bytes with no { or }, which would
// break its cluster hash tag, no PartitionSep, and no comma, which
// separates queues in a worker's list (queue:work --queue high,low, as
// in Laravel) so that no worker could be told to serve it. The error
// names the queue and what is wrong with it, such as
//
//	queue name "a{b" contains "{", which would break its cluster hash tag
//
// and wraps no sentinel: callers add their own.
func Validate(name string) error {
	switch {
	case name == "":
		return errors.New("queue name is empty")
	case len(name) > MaxLen:
		return fmt.Errorf("queue name %.20q... is longer than %d bytes", name, MaxLen)
	case name == "." || name == "..":
		return fmt.Errorf("queue name %q is a path's dot segment, which no link can name", name)
	}
	if i := strings.IndexAny(name, "{}"); i >= 0 {
		return fmt.Errorf("queue name %q contains %q, which would break its cluster hash tag", name, name[i:i+1])
	}
	if strings.Contains(name, ListSep) {
		return fmt.Errorf("queue name %q contains %q, which separates the queues of a list (queue:work --queue high,low), so no worker could be told to serve it", name, ListSep)
	}
	if strings.Contains(name, PartitionSep) {
		return fmt.Errorf("queue name %q contains %q, which is kept for the names of partitions (queue%s1)", name, PartitionSep, PartitionSep)
	}
	return nil
}

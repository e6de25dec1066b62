package runtime

import (
	"fmt"

	"github.com/jobgen/jobgen/internal/qname"
)

// DefaultPrefix is the key prefix used when EngineConfig.Prefix is empty.
const DefaultPrefix = "jobgen"

// ValidateQueueName reports why name cannot be used as a queue name: it
// must be 1 to 200 bytes with no { or }, which would break its cluster
// hash tag, no #, which joins a partitioned queue's name to the
// number of a partition (see PartitionNames), and no comma, which
// separates the queues of a worker's list. The error names the queue
// and the character, and wraps ErrInvalid.
func ValidateQueueName(name string) error {
	if err := qname.Validate(name); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}

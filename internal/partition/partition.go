// Package partition names the partitions of a queue and holds the rules
// for those names. It is pure computation: runtime's engine decides
// which partition a job goes to and loops over them.
//
// A queue's keys share one hash tag, so on a Redis Cluster a queue lives
// on one master, however busy it is. A queue split into n partitions
// gives each a hash tag of its own, spread over the slot space (and so
// over the masters of a cluster with evenly split slots):
//
//	partition 0      the queue itself, keys jobgen:{emails}:...
//	partition i > 0  the queue "emails#i", keys jobgen:{emails#i}:...
//	                 (or "emails#i.k", the first k whose slot lies where
//	                 partition i should be; see Names)
//
// Every engine computes the same names, so producers and workers agree
// as long as they are configured with the same number of partitions.
package partition

import (
	"strconv"
	"strings"

	"github.com/jobgen/jobgen/internal/qname"
)

// Max is the most partitions a queue may have.
const Max = 64

// Sep joins a queue name and a partition number. qname.Validate rejects
// it, so a queue name never passes for a partition.
const Sep = qname.PartitionSep

// SlotCount is the number of Redis Cluster hash slots.
const SlotCount = 16384

// Names names the n partitions of queue; the first is queue itself. The
// slot ring is cut into n equal arcs; the queue's own slot falls in one,
// and partition i goes in the middle half of the i-th arc after it. With
// the slots split evenly over m masters in contiguous ranges (as
// redis-cli --cluster create does) and n = m, every partition lands on a
// master of its own.
func Names(queue string, n int) []string {
	names := make([]string, n)
	names[0] = queue
	first := int(KeySlot(queue)) * n / SlotCount
	for i := 1; i < n; i++ {
		arc := (first + i) % n
		lo, hi := (arc*SlotCount+n-1)/n, (arc+1)*SlotCount/n-1
		margin := (hi - lo) / 4
		lo, hi = lo+margin, hi-margin
		name := queue + Sep + strconv.Itoa(i)
		for k := 1; k <= 10_000_000; k++ {
			if s := int(KeySlot(name)); s >= lo && s <= hi {
				break
			}
			name = queue + Sep + strconv.Itoa(i) + "." + strconv.Itoa(k)
		}
		names[i] = name
	}
	return names
}

// KeySlot is the cluster slot of a hash tag's content: CRC16 (XMODEM)
// mod 16384, as Redis computes it.
func KeySlot(tag string) uint16 {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % SlotCount
}

// IsNumber reports whether s is "i" or "i.k", decimal numbers: the part
// of a partition's name after Sep.
func IsNumber(s string) bool {
	i, k, dotted := strings.Cut(s, ".")
	digits := func(s string) bool {
		return s != "" && strings.Trim(s, "0123456789") == ""
	}
	return digits(i) && (!dotted || digits(k))
}

// ValidateName is qname.Validate for names that may also be those of a
// partition, "queue#i" or "queue#i.k" as Names makes them. Like
// qname.Validate, its error wraps no sentinel.
func ValidateName(name string) error {
	queue, part, ok := strings.Cut(name, Sep)
	if !ok || qname.Validate(queue) != nil || !IsNumber(part) {
		return qname.Validate(name)
	}
	return nil
}

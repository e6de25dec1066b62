package main

import (
	"context"
	"os"
)

// Two orders, one job at a time: order B-2's chain stops at its
// declined charge, whose catch callback queues the stock release.
func Example() {
	if err := run(context.Background(), "embedded://chain-example", "chain-example", os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// order A-1: reserved lamp, bulb
	// order B-2: reserved chair
	// order A-1: charged $42.50
	// order B-2: charging $129.00: declined
	// order B-2: main.ChargeCard failed for good (declined: true); the rest of its chain is dropped
	// order A-1: shipped
	// order B-2: stock released
	// order A-1: receipt emailed
}

package main

import (
	"context"
	"os"
)

// The quickstart on an in-process Redis. The worker runs jobs
// concurrently, so the order of the lines may vary.
func Example() {
	err := run(context.Background(), config{URL: "embedded://quickstart-example", Prefix: "quickstart", Out: os.Stdout})
	if err != nil {
		panic(err)
	}
	// Unordered output:
	// Dispatching:
	//   SendWelcomeEmail to ada@example.com, now
	//   ResizeAvatar of user 1, in 300ms
	//   ResizeAvatar of user 2, then NotifyTeam: a chain
	//   SendWelcomeEmail to nobody@example.invalid, which the mail server rejects
	// Working:
	//   sent a welcome email to ada@example.com
	//   resized the avatar of user 2 to [64 256]
	//   told the team: user 2 is set up
	//   resized the avatar of user 1 to [64]
	//   welcome email to nobody@example.invalid, attempt 1: rejected
	//   main.SendWelcomeEmail attempt 1 failed; retry in 100ms
	//   welcome email to nobody@example.invalid, attempt 2: rejected
	//   main.SendWelcomeEmail attempt 2 failed; retry in 200ms
	//   welcome email to nobody@example.invalid, attempt 3: rejected
	//   main.SendWelcomeEmail failed for good after 3 attempts
	// Done: nothing left to run.
	// In the failed store, to retry or forget:
	//   main.SendWelcomeEmail on queue emails, 3 attempts: jobgen: job failed after 3 of 3 tries: send to nobody@example.invalid: 550 no such user
}

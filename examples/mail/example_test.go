package main

import (
	"context"
	"os"
)

// The demo on an in-process Redis: a worker sends each user's mail, one
// job at a time; the bounce fails its job at once, without retries.
func Example() {
	if err := demo(context.Background(), "embedded://mail-example", "mail-example", os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// From: hello@example.com
	// To: ada@example.com
	// Subject: Welcome, Ada
	//
	// Hi Ada,
	//
	// thanks for signing up.
	//
	// level=INFO msg="mail sent" to=ada@example.com template=welcome attempt=1
	// level=WARN msg="mail undeliverable" to=nobody@example.invalid template=welcome err="permanent: 550 no such domain: nobody@example.invalid"
	// From: hello@example.com
	// To: ada@example.com
	// Subject: Reset your password
	//
	// Someone asked to reset the password of ada@example.com.
	// To choose a new one, open https://example.com/reset/abc123
	//
	// level=INFO msg="mail sent" to=ada@example.com template=reset attempt=1
}

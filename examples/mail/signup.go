package main

import (
	"context"
	"fmt"
	"strings"
)

// SignUp is application code that queues mail: it does its own work,
// then dispatches the welcome email for a worker to send.
func SignUp(ctx context.Context, email, name string) error {
	if !strings.Contains(email, "@") {
		return fmt.Errorf("sign up: %q is not an email address", email)
	}
	// ... store the user ...
	if _, err := (SendWelcome{Email: email, Name: name}).Dispatch(ctx); err != nil {
		return fmt.Errorf("sign up %s: %w", email, err)
	}
	return nil
}

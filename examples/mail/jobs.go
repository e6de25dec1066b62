package main

//go:generate go tool jobgen

// SendWelcome emails a new user. A mail server that is down is tried
// again after 1s, 10s, then every minute, five times in all.
//
//job:queue=mail tries=5 backoff=1s,10s,1m timeout=20s tags=mail
type SendWelcome struct {
	Email string
	Name  string
}

// SendPasswordReset emails a password-reset link. The link expires, so
// the job is retried for 15 minutes at most, and it gives up after
// three errors.
//
//job:queue=mail retry_until=15m max_exceptions=3 backoff=5s timeout=10s tags=mail,security
type SendPasswordReset struct {
	Email string
	Token string
}

package runtime

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// AttemptError is the error one attempt of a job ended with.
type AttemptError struct {
	// Attempt is the attempt's number, 1 for the first.
	Attempt int
	// At is when the attempt was settled (Redis clock).
	At time.Time
	// Error is the error's message, cut to maxAttemptError bytes.
	Error string
}

// maxAttemptError bounds the message kept of each attempt's error; the
// errors hash keeps the last 10 attempts' of each job
// (lua/lib/attempt_errors.lua).
const maxAttemptError = 1000

// attemptErrorArg is err's message as the errors hash keeps it: without
// the byte that separates its records, and cut to maxAttemptError bytes
// on a rune boundary.
func attemptErrorArg(err error) string {
	msg := strings.ReplaceAll(err.Error(), "\x1e", " ")
	if len(msg) <= maxAttemptError {
		return msg
	}
	cut := maxAttemptError - len("…")
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + "…"
}

// parseAttemptErrors reads an entry of the errors hash: records
// "<unix ms> <attempt> <message>" separated by 0x1e. A record that does
// not parse is kept as its message.
func parseAttemptErrors(raw string) []AttemptError {
	if raw == "" {
		return nil
	}
	recs := strings.Split(raw, "\x1e")
	out := make([]AttemptError, 0, len(recs))
	for _, r := range recs {
		ms, rest, _ := strings.Cut(r, " ")
		n, msg, ok := strings.Cut(rest, " ")
		at, err1 := strconv.ParseInt(ms, 10, 64)
		a, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil {
			out = append(out, AttemptError{Error: r})
			continue
		}
		out = append(out, AttemptError{Attempt: a, At: time.UnixMilli(at), Error: msg})
	}
	return out
}

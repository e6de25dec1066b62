package runtime

import (
	"errors"
	"time"
)

// The inspectors below let a worker outside this package (such as the
// Laravel bridge's) act on what a handler returned as runtime's own
// worker does.

// AsRelease reports whether err, or an error it wraps, is a ReleaseRequest
// or DeferRequest request, and its delay. IsDeferral tells the two apart.
func AsRelease(err error) (delay time.Duration, ok bool) {
	var r *releaseRequest
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}

// IsDeferral reports whether err, or an error it wraps, is a DeferRequest
// request: a release that gives back the attempt (ReleaseOpts.Deferral).
func IsDeferral(err error) bool {
	var r *releaseRequest
	return errors.As(err, &r) && r.deferral
}

// AsFail reports whether err, or an error it wraps, is a FailRequest
// request, and the reason it carries.
func AsFail(err error) (reason error, ok bool) {
	var f *failRequest
	if errors.As(err, &f) {
		return f.err, true
	}
	return nil, false
}

// IsDelete reports whether err, or an error it wraps, is a DeleteRequest
// request.
func IsDelete(err error) bool { return errors.Is(err, deleteRequest{}) }

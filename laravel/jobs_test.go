package laravel_test

import (
	"context"

	"github.com/jobgen/jobgen/laravel"
	"github.com/jobgen/jobgen/runtime"
)

// The Go side of testdata/php/jobs.php, written as jobgen generates
// them for //job:laravel=... structs.

type SendWelcomeEmail struct {
	UserID int      `php:"userId"`
	Email  string   `php:"email,protected"`
	Tags   []string `php:"tags,private"`
}

func (SendWelcomeEmail) JobName() string { return "test.SendWelcomeEmail" }
func (SendWelcomeEmail) JobOptions() runtime.JobOptions {
	return runtime.JobOptions{Connection: "laravel", Tries: 3}
}
func (j SendWelcomeEmail) EncodeJob() ([]byte, error) { return runtime.Encode(j) }

type ResizeAvatar struct {
	UserID  int      `php:"userId"`
	Sizes   []int    `php:"sizes"`
	Quality *float64 `php:"quality"`
}

func (ResizeAvatar) JobName() string                { return "test.ResizeAvatar" }
func (ResizeAvatar) JobOptions() runtime.JobOptions { return runtime.JobOptions{Connection: "laravel"} }
func (j ResizeAvatar) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

func newMapper() *laravel.Mapper {
	m := laravel.NewMapper()
	laravel.Map[SendWelcomeEmail](m, `App\Jobs\SendWelcomeEmail`, SendWelcomeEmail{}.JobName())
	laravel.Map[ResizeAvatar](m, `App\Jobs\ResizeAvatar`, ResizeAvatar{}.JobName())
	return m
}

// dispatch sends job with its PendingDispatch options through d.
func dispatch(ctx context.Context, d runtime.Dispatcher, p *runtime.PendingDispatch) (string, error) {
	return p.Dispatch(runtime.WithDispatcher(ctx, d))
}

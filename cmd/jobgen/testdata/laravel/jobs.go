// Package welcome is a golden case: jobs that stand for a Laravel app's
// PHP jobs, one queued object and one string job, beside a job that
// maps to none.
package welcome

// SendWelcomeEmail is App\Jobs\SendWelcomeEmail of the Laravel app.
//
//job:laravel=App\Jobs\SendWelcomeEmail queue=emails tries=3 backoff=10s,1m
type SendWelcomeEmail struct {
	UserID int      `php:"userId"`
	Email  string   `php:"email,protected"`
	Tags   []string `php:"tags,private"`
}

// ImportRow is a string job, Queue::push('App\Jobs\ImportRow@handle', $data).
//
//job:laravel=App\Jobs\ImportRow@handle name=imports.row
type ImportRow struct {
	File string `json:"file"`
	Row  int    `json:"row"`
}

// Audit is a Go-only job.
//
// job:
type Audit struct {
	Event string
}

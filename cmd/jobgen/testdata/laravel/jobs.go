// Package welcome is a golden case: jobs that stand for a Laravel app's
// PHP jobs, a queued object, an encrypted one and a string job, beside a
// job that maps to none.
package welcome

// SendWelcomeEmail is App\Jobs\SendWelcomeEmail of the Laravel app.
//
//job:laravel=App\Jobs\SendWelcomeEmail queue=emails tries=3 backoff=10s,1m
type SendWelcomeEmail struct {
	UserID int      `php:"userId"`
	Email  string   `php:"email,protected"`
	Tags   []string `php:"tags,private"`
}

// ChargeCard is App\Jobs\ChargeCard, a ShouldBeEncrypted job of the app:
// RegisterLaravel maps it with MapEncrypted, so that a Go dispatch seals
// its command with the app's key as Laravel does.
//
//job:laravel=App\Jobs\ChargeCard encrypted queue=billing
type ChargeCard struct {
	OrderID int    `php:"orderId"`
	Card    string `php:"card"`
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

package main

//go:generate go tool jobgen

// SendWelcomeEmail is the Laravel app's App\Jobs\SendWelcomeEmail
// (php/SendWelcomeEmail.php), now handled by this Go service. The app
// still dispatches it with SendWelcomeEmail::dispatch(...); Go code
// dispatches it too, on the connection "laravel".
//
//job:laravel=App\Jobs\SendWelcomeEmail queue=emails tries=3 backoff=10s,1m connection=laravel
type SendWelcomeEmail struct {
	UserID int    `php:"userId"`
	Email  string `php:"email,protected"`
}

package examplejobs

// SendSecret is the app's App\Jobs\SendSecret, a ShouldBeEncrypted job
// (laravel/testdata/php/jobs.php): Laravel seals its command with the
// app's key on the queue, and so must a Go dispatch of it.
//
//job:laravel=App\Jobs\SendSecret encrypted
type SendSecret struct {
	UserID int    `php:"userId"`
	Secret string `php:"secret"`
}

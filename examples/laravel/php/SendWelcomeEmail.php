<?php
// The Laravel app's job, as it was before the Go service took it over.
// Its queue, tries and backoff match the //job: line of jobs.go; its
// properties match the fields' php tags. Once every worker of the
// "emails" queue is the Go service, handle() no longer runs in PHP,
// but the class stays: the app dispatches with it.

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

class SendWelcomeEmail implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 3;
    public $backoff = [10, 60];

    public function __construct(public int $userId, protected string $email)
    {
        $this->onQueue('emails');
    }

    public function handle(Mailer $mailer)
    {
        $mailer->to($this->email)->send(new Welcome($this->userId));
    }
}

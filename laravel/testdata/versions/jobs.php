<?php
// The job classes of make.php: the same App\Jobs classes as
// testdata/php/jobs.php (their properties and visibilities), with no
// handle() to run: these payloads are only built, never run in PHP.

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeEncrypted;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

class SendWelcomeEmail implements ShouldQueue
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 3;

    public function __construct(public int $userId = 0, protected string $email = '', private array $tags = [])
    {
    }
}

class ResizeAvatar implements ShouldQueue
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $userId = 0, public array $sizes = [], public ?float $quality = null)
    {
    }
}

class FlakyReport implements ShouldQueue
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public $tries = 5;
    public $maxExceptions = 2;
    public $timeout = 30;
    public $failOnTimeout = true;
    public $backoff = [1, 5, 10];

    public function __construct(public int $reportId = 0)
    {
    }
}

class SendSecret implements ShouldQueue, ShouldBeEncrypted
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $userId = 0, public string $secret = '')
    {
    }
}

// DebouncedSync (13.x): debounced for 5 seconds (DebounceFor); a newer
// dispatch supersedes it.
class DebouncedSync implements ShouldQueue
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public $debounceFor = 5;

    public function __construct(public int $accountId = 0)
    {
    }
}

class UniqueReport implements ShouldQueue, \Illuminate\Contracts\Queue\ShouldBeUnique
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public $uniqueFor = 60;

    public function __construct(public int $reportId = 0)
    {
    }

    public function uniqueId()
    {
        return (string) $this->reportId;
    }
}

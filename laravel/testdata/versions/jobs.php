<?php
// The job classes of make.php and work.php: the same App\Jobs classes
// as testdata/php/jobs.php (their properties and visibilities). Each
// reports what it did to the results list (RESULTS, default "results").

namespace App\Jobs;

function report(string ...$fields): void
{
    \Illuminate\Container\Container::getInstance()->make('redis')->connection()->rpush(getenv('RESULTS') ?: 'results', implode('|', $fields));
}

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

    public function handle()
    {
        report('ran', 'SendWelcomeEmail', (string) $this->userId, $this->email, implode(',', $this->tags), (string) $this->attempts());
    }
}

class ResizeAvatar implements ShouldQueue
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $userId = 0, public array $sizes = [], public ?float $quality = null)
    {
    }

    public function handle()
    {
        report('ran', 'ResizeAvatar', (string) $this->userId, implode(',', $this->sizes), var_export($this->quality, true));
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

    public function handle()
    {
        report('ran', 'SendSecret', (string) $this->userId, $this->secret);
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

    public function handle()
    {
        report('ran', 'DebouncedSync', (string) $this->accountId);
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

    public function handle()
    {
        report('ran', 'UniqueReport', (string) $this->reportId);
    }
}

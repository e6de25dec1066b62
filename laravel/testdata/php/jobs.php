<?php
// The job classes of the tests: a Laravel app's jobs as a Go service
// takes them over. Each reports what it did to the results list.

namespace App\Jobs;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldBeEncrypted;
use Illuminate\Contracts\Queue\ShouldBeUnique;
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
        \report('ran', 'SendWelcomeEmail', (string) $this->userId, $this->email, implode(',', $this->tags), (string) $this->attempts());
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
        \report('ran', 'ResizeAvatar', (string) $this->userId, implode(',', $this->sizes), var_export($this->quality, true), (string) $this->attempts());
    }
}

// SendSecret is sealed with the app's key on the queue (ShouldBeEncrypted).
class SendSecret implements ShouldQueue, ShouldBeEncrypted
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $userId = 0, public string $secret = '')
    {
    }

    public function handle()
    {
        \report('ran', 'SendSecret', (string) $this->userId, $this->secret, (string) $this->attempts());
    }
}

// UniqueReport holds a lock in the cache store from its dispatch until it
// has run (ShouldBeUnique).
class UniqueReport implements ShouldQueue, ShouldBeUnique
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
        \report('ran', 'UniqueReport', (string) $this->reportId, (string) $this->attempts());
    }
}

// ChargeCardPhpOnly is a job no Go type is mapped to: a Go worker leaves
// it on its queue for a PHP worker.
class ChargeCardPhpOnly implements ShouldQueue
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $orderId = 0)
    {
    }

    public function handle()
    {
        \report('ran', 'ChargeCardPhpOnly', (string) $this->orderId, (string) $this->attempts());
    }
}

// Scenario is what the conformance jobs do on each attempt: a list of
// outcomes, one per attempt ("ok", "throw", "release:N", "delete",
// "sleep:N", "fail"), the last repeating.
trait RunsScenario
{
    public string $name = '';
    public array $steps = ['ok'];

    public function handle()
    {
        $attempt = $this->attempts();
        $step = $this->steps[min($attempt, count($this->steps)) - 1];
        \report('attempt', $this->name, (string) $attempt, $step, (string) time());
        [$what, $arg] = array_pad(explode(':', $step, 2), 2, null);
        switch ($what) {
            case 'ok':
                return;
            case 'throw':
                throw new \RuntimeException("boom on attempt $attempt");
            case 'release':
                $this->release((int) $arg);
                return;
            case 'delete':
                $this->delete();
                return;
            case 'sleep':
                sleep((int) $arg);
                return;
            case 'fail':
                $this->fail(new \RuntimeException('failed by the job'));
                return;
        }
    }

    public function failed(\Throwable $e)
    {
        \report('failed-hook', $this->name);
    }
}

class Scenario implements ShouldQueue
{
    use InteractsWithQueue, Queueable, SerializesModels, RunsScenario;

    public $tries;
    public $backoff;
    public $maxExceptions;
    public $timeout;
    public $failOnTimeout = false;
    public $until;

    public function retryUntil()
    {
        return $this->until ? \Illuminate\Support\Carbon::createFromTimestamp($this->until) : null;
    }
}

// ImportRow is a string job: Queue::push('App\Jobs\ImportRow@handle', $data).
// Such a handler gets the job and the data, and deletes the job itself.
class ImportRow
{
    public function handle($job, $data)
    {
        \report('ran', 'ImportRow', $data['file'], (string) $data['row'], (string) $job->attempts());
        $job->delete();
    }
}

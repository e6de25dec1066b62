<?php
// The job class of the batch tests (batch.php): a Laravel app's batched
// job, which a Go type may be mapped to.

namespace App\Jobs;

use Illuminate\Bus\Batchable;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

class BatchedReport implements ShouldQueue
{
    use Batchable, InteractsWithQueue, Queueable, SerializesModels;

    public function __construct(public int $reportId = 0)
    {
    }

    public function handle()
    {
        \report('ran', 'BatchedReport', (string) $this->reportId, (string) $this->attempts());
    }
}

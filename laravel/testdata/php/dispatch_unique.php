<?php
// Dispatches a ShouldBeUnique job as an application does (dispatch():
// a PendingDispatch, which takes the job's unique lock first), COUNT
// times, onto QUEUE. Prints how many were dispatched.
// Usage: php dispatch_unique.php ID COUNT QUEUE
require __DIR__ . '/bootstrap.php';

use App\Jobs\UniqueReport;
use Illuminate\Foundation\Bus\PendingDispatch;

[$_, $id, $count, $queue] = $argv;
$before = Illuminate\Queue\Capsule\Manager::connection()->size($queue);
for ($i = 0; $i < (int) $count; $i++) {
    $pending = new PendingDispatch((new UniqueReport((int) $id))->onQueue($queue));
    unset($pending); // __destruct dispatches, if the lock was free
}
echo Illuminate\Queue\Capsule\Manager::connection()->size($queue) - $before, "\n";

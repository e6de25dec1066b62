<?php
// Pushes jobs with Laravel's own Queue::push and Queue::later.
// Usage: php push.php COUNT QUEUE
// Pushes COUNT jobs alternating SendWelcomeEmail and ResizeAvatar; every
// tenth is pushed with later(1). Prints nothing; exits non-zero on error.
require __DIR__ . '/bootstrap.php';

use App\Jobs\ResizeAvatar;
use App\Jobs\SendWelcomeEmail;
use Illuminate\Queue\Capsule\Manager as Queue;

[$_, $count, $queue] = $argv;
for ($i = 0; $i < (int) $count; $i++) {
    $job = $i % 2 === 0
        ? new SendWelcomeEmail($i, "user$i@example.com", ['welcome', "n$i"])
        : new ResizeAvatar($i, [64, 128 + $i], $i % 4 === 1 ? 0.5 : null);
    if ($i % 10 === 9) {
        Queue::later(1, $job, '', $queue);
    } else {
        Queue::push($job, '', $queue);
    }
}

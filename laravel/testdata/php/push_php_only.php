<?php
// Pushes jobs of a class no Go type is mapped to, with Laravel's own
// Queue::push.
// Usage: php push_php_only.php FROM COUNT QUEUE
// Pushes ChargeCardPhpOnly FROM .. FROM+COUNT-1. Prints nothing; exits
// non-zero on error.
require __DIR__ . '/bootstrap.php';

use App\Jobs\ChargeCardPhpOnly;
use Illuminate\Queue\Capsule\Manager as Queue;

[$_, $from, $count, $queue] = $argv;
for ($i = (int) $from; $i < (int) $from + (int) $count; $i++) {
    Queue::push(new ChargeCardPhpOnly($i), '', $queue);
}

<?php
// Pushes COUNT string jobs, Queue::push('App\Jobs\ImportRow@handle', $data).
// Usage: php push_string.php COUNT QUEUE
require __DIR__ . '/bootstrap.php';

use Illuminate\Queue\Capsule\Manager as Queue;

[$_, $count, $queue] = $argv;
for ($i = 0; $i < (int) $count; $i++) {
    Queue::push('App\Jobs\ImportRow@handle', ['file' => "rows$i.csv", 'row' => $i], $queue);
}

<?php
// Pushes sealed jobs (ShouldBeEncrypted) with Laravel's own Queue::push,
// under the APP_KEY of the environment.
// Usage: php push_secret.php COUNT QUEUE
require __DIR__ . '/bootstrap.php';

use App\Jobs\SendSecret;
use Illuminate\Queue\Capsule\Manager as Queue;

[$_, $count, $queue] = $argv;
for ($i = 0; $i < (int) $count; $i++) {
    Queue::push(new SendSecret($i, "secret-$i"), '', $queue);
}

<?php
// Pops jobs with Laravel's own RedisQueue::pop (its migrate and pop
// scripts) and deletes each at once, without running it. Reports "ready"
// once booted, then "popped|ID|attempts()|attempts of the reserved copy"
// for each job.
// Stops after MAX jobs (0: no limit), or when the queue is empty and the
// key STOP (under the prefix) is set.
// Usage: php pop.php QUEUE MAX STOP
require __DIR__ . '/bootstrap.php';

use Illuminate\Container\Container;
use Illuminate\Queue\Capsule\Manager as Queue;

[$_, $queueName, $max, $stop] = $argv;
$max = (int) $max;
$connection = Queue::connection('redis');
$redis = Container::getInstance()->make('redis')->connection();
report('ready');
for ($n = 0; $max === 0 || $n < $max;) {
    $job = $connection->pop($queueName);
    if ($job === null) {
        if ($redis->exists($stop)) {
            break;
        }
        usleep(1000);
        continue;
    }
    $reserved = json_decode($job->getReservedJob(), true);
    report('popped', $job->getJobId(), (string) $job->attempts(), (string) ($reserved['attempts'] ?? 'none'));
    $job->delete();
    $n++;
}

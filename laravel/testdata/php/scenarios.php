<?php
// Pushes conformance scenarios with Laravel's own Queue::push/later.
// Reads a JSON list from stdin: {name, steps, tries, backoff,
// maxExceptions, timeout, failOnTimeout, until (seconds from now, may be
// negative), delay (seconds)}; prints each job's uuid as "name uuid".
require __DIR__ . '/bootstrap.php';

use App\Jobs\Scenario;
use Illuminate\Queue\Capsule\Manager as Queue;

$queue = $argv[1] ?? 'default';
$specs = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
foreach ($specs as $s) {
    $job = new Scenario;
    $job->name = $s['name'];
    $job->steps = $s['steps'];
    $job->tries = $s['tries'] ?? null;
    $job->backoff = $s['backoff'] ?? null;
    $job->maxExceptions = $s['maxExceptions'] ?? null;
    $job->timeout = $s['timeout'] ?? null;
    $job->failOnTimeout = $s['failOnTimeout'] ?? false;
    $job->until = isset($s['until']) ? time() + $s['until'] : null;
    if (!empty($s['delay'])) {
        Queue::later($s['delay'], $job, '', $queue);
    } else {
        Queue::push($job, '', $queue);
    }
}

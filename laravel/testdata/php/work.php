<?php
// Runs Laravel's own Illuminate\Queue\Worker on a queue until it is
// empty (--stop-when-empty), or for --max-jobs.
// Usage: php work.php QUEUE [TRIES] [TIMEOUT] [MAX_JOBS] [STOP_WHEN_EMPTY 1|0] [SLEEP]
require __DIR__ . '/bootstrap.php';

use Illuminate\Queue\Events\JobExceptionOccurred;
use Illuminate\Queue\Events\JobFailed;
use Illuminate\Queue\Events\JobProcessed;
use Illuminate\Queue\Events\JobReleasedAfterException;
use Illuminate\Queue\Worker;
use Illuminate\Queue\WorkerOptions;

$queueName = $argv[1] ?? 'default';
$tries = (int) ($argv[2] ?? 1);
$timeout = (int) ($argv[3] ?? 60);
$maxJobs = (int) ($argv[4] ?? 0);
$stopWhenEmpty = ($argv[5] ?? '1') === '1';
$sleep = (int) ($argv[6] ?? 1);

$events->listen(JobProcessed::class, fn ($e) => report('processed', $e->job->uuid(), (string) $e->job->attempts(), $e->job->isDeleted() ? 'deleted' : '', $e->job->isReleased() ? 'released' : ''));
$events->listen(JobFailed::class, fn ($e) => report('failed', $e->job->uuid(), (string) $e->job->attempts(), get_class($e->exception)));
$events->listen(JobReleasedAfterException::class, fn ($e) => report('released-after-exception', $e->job->uuid(), (string) $e->job->attempts()));

$worker = new Worker($queue->getQueueManager(), $events, $container->make(Illuminate\Contracts\Debug\ExceptionHandler::class), fn () => false);
$worker->setCache($cache);
$options = new WorkerOptions('default', 0, 512, $timeout, $sleep, $tries, false, $stopWhenEmpty, $maxJobs);
$status = $worker->daemon('redis', $queueName, $options);
exit((int) $status);

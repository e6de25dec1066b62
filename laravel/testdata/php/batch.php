<?php
// Laravel's batches (Bus::batch) on PostgreSQL, with 8.83's own
// PendingBatch and DatabaseBatchRepository.
// Usage:
//   php batch.php migrate             create the job_batches table, as queue:batches-table's migration does
//   php batch.php dispatch QUEUE N    a batch of N BatchedReport jobs on QUEUE, whose then, catch and
//                                     finally callbacks report "then|ID", "catch|ID", "finally|ID"; prints its ID
//   php batch.php show ID             print the batch's row as JSON
//   php batch.php work QUEUE          run Laravel's worker on QUEUE until it is empty
// Environment, besides bootstrap.php's: DB_HOST, DB_PORT, DB_DATABASE,
// DB_USERNAME, BATCH_TABLE.
require __DIR__ . '/bootstrap.php';

use App\Jobs\BatchedReport;
use Illuminate\Bus\BatchFactory;
use Illuminate\Bus\BatchRepository;
use Illuminate\Bus\DatabaseBatchRepository;
use Illuminate\Bus\PendingBatch;
use Illuminate\Database\Capsule\Manager as DB;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Queue\Worker;
use Illuminate\Queue\WorkerOptions;

require_once __DIR__ . '/jobs_batch.php';

$db = new DB($container);
$db->addConnection([
    'driver' => 'pgsql',
    'host' => env_or('DB_HOST', '127.0.0.1'),
    'port' => (int) env_or('DB_PORT', 5432),
    'database' => env_or('DB_DATABASE', 'postgres'),
    'username' => env_or('DB_USERNAME', 'postgres'),
    'password' => '',
], 'pgsql');
$table = env_or('BATCH_TABLE', 'job_batches');
$container->instance(BatchRepository::class, new DatabaseBatchRepository(
    new BatchFactory($queue->getQueueManager()), $db->getConnection('pgsql'), $table,
));

switch ($argv[1]) {
case 'migrate':
    // Illuminate/Queue/Console/stubs/batches.stub
    $db->getConnection('pgsql')->getSchemaBuilder()->create($table, function (Blueprint $t) {
        $t->string('id')->primary();
        $t->string('name');
        $t->integer('total_jobs');
        $t->integer('pending_jobs');
        $t->integer('failed_jobs');
        $t->text('failed_job_ids');
        $t->mediumText('options')->nullable();
        $t->integer('cancelled_at')->nullable();
        $t->integer('created_at');
        $t->integer('finished_at')->nullable();
    });
    break;
case 'dispatch':
    [$_, $_, $queueName, $n] = $argv;
    $jobs = [];
    for ($i = 0; $i < (int) $n; $i++) {
        $jobs[] = new BatchedReport($i);
    }
    $batch = (new PendingBatch($container, collect($jobs)))
        ->onQueue($queueName)
        ->then(function ($batch) { \report('then', $batch->id); })
        ->catch(function ($batch, $e) { \report('catch', $batch->id); })
        ->finally(function ($batch) { \report('finally', $batch->id); })
        ->dispatch();
    echo $batch->id;
    break;
case 'show':
    echo json_encode($db->getConnection('pgsql')->table($table)->where('id', $argv[2])->first());
    break;
case 'work':
    $worker = new Worker($queue->getQueueManager(), $events, $container->make(Illuminate\Contracts\Debug\ExceptionHandler::class), fn () => false);
    $worker->setCache($cache);
    exit((int) $worker->daemon('redis', $argv[2], new WorkerOptions('default', 0, 512, 60, 1, 1, false, true, 0)));
default:
    fwrite(STDERR, "usage: php batch.php migrate|dispatch QUEUE N|show ID|work QUEUE\n");
    exit(2);
}

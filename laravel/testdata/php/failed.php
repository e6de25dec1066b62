<?php
// Laravel's failed_jobs table, as an application keeps it, through
// Laravel 8.83's own DatabaseUuidFailedJobProvider and queue:retry logic.
// Usage:
//   php failed.php migrate        create the table, as Laravel's migration does
//   php failed.php list           print the failed jobs as JSON, one a line
//   php failed.php retry UUID     what `php artisan queue:retry UUID` does
// Environment, besides bootstrap.php's: DB_DRIVER (pgsql, the default, or
// sqlite), DB_HOST, DB_PORT, DB_DATABASE (a file for sqlite),
// DB_USERNAME, FAILED_TABLE.
require __DIR__ . '/bootstrap.php';

use Illuminate\Database\Capsule\Manager as DB;
use Illuminate\Database\Schema\Blueprint;
use Illuminate\Queue\Capsule\Manager as Queue;
use Illuminate\Queue\Console\RetryCommand;
use Illuminate\Queue\Failed\DatabaseUuidFailedJobProvider;

$db = new DB(Illuminate\Container\Container::getInstance());
$driver = env_or('DB_DRIVER', 'pgsql');
$db->addConnection($driver === 'sqlite' ? [
    'driver' => 'sqlite',
    'database' => env_or('DB_DATABASE', ''),
    'prefix' => '',
] : [
    'driver' => 'pgsql',
    'host' => env_or('DB_HOST', '127.0.0.1'),
    'port' => (int) env_or('DB_PORT', 5432),
    'database' => env_or('DB_DATABASE', 'postgres'),
    'username' => env_or('DB_USERNAME', 'postgres'),
    'password' => '',
], $driver);
$table = env_or('FAILED_TABLE', 'failed_jobs');
$failer = new DatabaseUuidFailedJobProvider($db->getDatabaseManager(), $driver, $table);

switch ($argv[1]) {
case 'migrate':
    // database/migrations/2019_08_19_000000_create_failed_jobs_table.php
    $db->getConnection($driver)->getSchemaBuilder()->create($table, function (Blueprint $t) {
        $t->id();
        $t->string('uuid')->unique();
        $t->text('connection');
        $t->text('queue');
        $t->longText('payload');
        $t->longText('exception');
        $t->timestamp('failed_at')->useCurrent();
    });
    break;
case 'list':
    foreach ($failer->all() as $job) {
        $payload = json_decode($job->payload, true);
        echo json_encode([
            'id' => $job->id, 'connection' => $job->connection, 'queue' => $job->queue,
            'class' => $payload['displayName'] ?? '', 'exception' => $job->exception, 'failed_at' => $job->failed_at,
        ]), "\n";
    }
    break;
case 'retry':
    // RetryCommand::handle for one ID: find, push back with attempts reset
    // (resetAttempts, refreshRetryUntil), forget.
    $job = $failer->find($argv[2]);
    if ($job === null) {
        fwrite(STDERR, "no failed job {$argv[2]}\n");
        exit(1);
    }
    $cmd = new RetryCommand;
    $reset = new ReflectionMethod($cmd, 'resetAttempts');
    $reset->setAccessible(true);
    $refresh = new ReflectionMethod($cmd, 'refreshRetryUntil');
    $refresh->setAccessible(true);
    Queue::connection($job->connection)->pushRaw($refresh->invoke($cmd, $reset->invoke($cmd, $job->payload)), $job->queue);
    $failer->forget($argv[2]);
    break;
default:
    fwrite(STDERR, "usage: php failed.php migrate|list|retry UUID\n");
    exit(2);
}

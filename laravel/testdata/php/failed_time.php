<?php
// failed_at as Laravel 8.83 writes and prunes it, through its own
// DatabaseUuidFailedJobProvider, on a PostgreSQL connection whose
// session timezone (config/database.php, pgsql.timezone) may differ from
// the app's (config/app.php, timezone: date_default_timezone_set).
// Usage:
//   php failed_time.php log QUEUE     what Laravel's worker records for a failed job (failer->log)
//   php failed_time.php prune HOURS   what `php artisan queue:prune-failed --hours=HOURS` does; prints the count
//   php failed_time.php list          uuid and failed_at as the app reads them, one a line
// Environment: DB_HOST, DB_PORT, DB_DATABASE, DB_USERNAME, FAILED_TABLE,
// DB_TIMEZONE (the session's), APP_TIMEZONE (the app's, default UTC).
require_once '/usr/share/php/Illuminate/autoload.php';

use Illuminate\Database\Capsule\Manager as DB;
use Illuminate\Queue\Failed\DatabaseUuidFailedJobProvider;
use Illuminate\Support\Carbon;

function env_or(string $name, $default)
{
    $v = getenv($name);
    return $v === false || $v === '' ? $default : $v;
}

date_default_timezone_set(env_or('APP_TIMEZONE', 'UTC')); // as LoadConfiguration does
$db = new DB;
$config = [
    'driver' => 'pgsql',
    'host' => env_or('DB_HOST', '127.0.0.1'),
    'port' => (int) env_or('DB_PORT', 5432),
    'database' => env_or('DB_DATABASE', 'postgres'),
    'username' => env_or('DB_USERNAME', 'postgres'),
    'password' => '',
];
if (env_or('DB_TIMEZONE', '') !== '') {
    $config['timezone'] = env_or('DB_TIMEZONE', '');
}
$db->addConnection($config, 'pgsql');
$failer = new DatabaseUuidFailedJobProvider($db->getDatabaseManager(), 'pgsql', env_or('FAILED_TABLE', 'failed_jobs'));

switch ($argv[1]) {
case 'log':
    $uuid = (string) Illuminate\Support\Str::uuid();
    $payload = json_encode(['uuid' => $uuid, 'displayName' => 'App\Jobs\FromPHP', 'job' => 'Illuminate\Queue\CallQueuedHandler@call', 'data' => [], 'attempts' => 1]);
    echo $failer->log('redis', $argv[2], $payload, new RuntimeException('failed in PHP')), "\n";
    break;
case 'prune':
    // PruneFailedJobsCommand::handle
    echo $failer->prune(Carbon::now()->subHours((int) $argv[2])), "\n";
    break;
case 'list':
    foreach ($failer->all() as $job) {
        echo $job->id, ' ', $job->failed_at, "\n";
    }
    break;
default:
    fwrite(STDERR, "usage: php failed_time.php log QUEUE|prune HOURS|list\n");
    exit(2);
}

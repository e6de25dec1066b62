<?php
// Boots Illuminate\Queue without an application, as Debian's
// php-laravel-framework (Laravel 8.83) installs it: a Capsule manager on
// a Redis connection, with a Container that binds the events
// dispatcher, the bus dispatcher, the container contract, an exception
// handler and a Redis cache (for queue:restart and maxExceptions).
//
// Environment: REDIS_HOST, REDIS_PORT, REDIS_DB, REDIS_PREFIX (the
// connection prefix), RETRY_AFTER (seconds), BLOCK_FOR (seconds, or
// empty), RESULTS (list key, under the prefix, that jobs and events
// report to).

require_once '/usr/share/php/Illuminate/autoload.php';
require_once __DIR__ . '/jobs.php';

use Illuminate\Cache\RedisStore;
use Illuminate\Cache\Repository;
use Illuminate\Container\Container;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Events\Dispatcher as Events;
use Illuminate\Queue\Capsule\Manager as Queue;
use Illuminate\Redis\RedisManager;

final class TestExceptionHandler implements ExceptionHandler
{
    public function report(Throwable $e) {}
    public function shouldReport(Throwable $e) { return false; }
    public function render($request, Throwable $e) { throw $e; }
    public function renderForConsole($output, Throwable $e) { fwrite(STDERR, (string) $e); }
}

function env_or(string $name, $default)
{
    $v = getenv($name);
    return $v === false || $v === '' ? $default : $v;
}

$container = new Container;
Container::setInstance($container);
$container->instance(Illuminate\Contracts\Container\Container::class, $container);
$events = new Events($container);
$container->instance('events', $events);
$container->instance(Illuminate\Contracts\Events\Dispatcher::class, $events);
// The bus queues what should be queued (the next job of a chain), as an
// application's does, through the Capsule manager's connections.
$container->singleton(Illuminate\Contracts\Bus\Dispatcher::class, fn ($c) => new Illuminate\Bus\Dispatcher(
    $c,
    fn ($connection = null) => Illuminate\Queue\Capsule\Manager::connection($connection),
));
$container->singleton(ExceptionHandler::class, fn () => new TestExceptionHandler);

$redisConfig = [
    'client' => 'phpredis',
    'options' => ['prefix' => env_or('REDIS_PREFIX', '')],
    'default' => [
        'host' => env_or('REDIS_HOST', '127.0.0.1'),
        'port' => (int) env_or('REDIS_PORT', 6379),
        'database' => (int) env_or('REDIS_DB', 0),
        'read_timeout' => 60,
    ],
];
$redis = new RedisManager($container, 'phpredis', $redisConfig);
$container->instance('redis', $redis);

$cache = new Repository(new RedisStore($redis, 'laravel_cache', 'default'));
$container->instance('cache.store', $cache);
$container->instance(Illuminate\Contracts\Cache\Repository::class, $cache);

// APP_KEY, if set, binds the app's encrypter, with which Laravel seals
// ShouldBeEncrypted jobs (Queue::createObjectPayload) and opens them
// (CallQueuedHandler).
$appKey = env_or('APP_KEY', '');
if ($appKey !== '') {
    $raw = str_starts_with($appKey, 'base64:') ? base64_decode(substr($appKey, 7)) : $appKey;
    $container->instance(Illuminate\Contracts\Encryption\Encrypter::class, new Illuminate\Encryption\Encrypter($raw, 'AES-256-CBC'));
}

$queue = new Queue($container);
$blockFor = env_or('BLOCK_FOR', null);
$queue->addConnection([
    'driver' => 'redis',
    'connection' => 'default',
    'queue' => 'default',
    'retry_after' => (int) env_or('RETRY_AFTER', 90),
    'block_for' => $blockFor === null ? null : (int) $blockFor,
], 'redis');
$queue->getContainer()['config']['queue.default'] = 'redis';
$queue->setAsGlobal();

// report writes one line to the results list: what happened, to which job.
function report(string ...$fields): void
{
    Container::getInstance()->make('redis')->connection()->rpush(env_or('RESULTS', 'results'), implode('|', $fields));
}

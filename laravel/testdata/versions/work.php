<?php
// Runs one Laravel version's own Illuminate\Queue\Worker, from its
// source (autoload.php), on a queue until it is empty: as php artisan
// queue:work --stop-when-empty --tries=1 does, on a Redis connection and
// a Redis cache store, without an application.
// Usage: php work.php SRC QUEUE
// Environment: REDIS_HOST, REDIS_PORT, REDIS_DB, REDIS_PREFIX, APP_KEY
// (base64:..., for encrypted jobs), RESULTS (the list jobs and events
// report to, under the prefix).
[$_, $src, $queueName] = $argv;
require __DIR__ . '/autoload.php';

use Illuminate\Container\Container;

$env = fn (string $k, $d) => getenv($k) === false || getenv($k) === '' ? $d : getenv($k);
$container = new Container;
Container::setInstance($container);
$container->instance(Illuminate\Contracts\Container\Container::class, $container);
$events = new Illuminate\Events\Dispatcher($container);
$container->instance('events', $events);
$container->instance(Illuminate\Contracts\Events\Dispatcher::class, $events);
$container->singleton(Illuminate\Contracts\Bus\Dispatcher::class, fn ($c) => new Illuminate\Bus\Dispatcher($c, fn ($connection = null) => Illuminate\Queue\Capsule\Manager::connection($connection)));
final class ReportingHandler implements Illuminate\Contracts\Debug\ExceptionHandler
{
    public function report(Throwable $e) { fwrite(STDERR, $e->getMessage() . "\n"); }
    public function shouldReport(Throwable $e) { return true; }
    public function render($request, Throwable $e) { throw $e; }
    public function renderForConsole($output, Throwable $e) { fwrite(STDERR, (string) $e); }
}
$container->singleton(Illuminate\Contracts\Debug\ExceptionHandler::class, fn () => new ReportingHandler);
$redis = new Illuminate\Redis\RedisManager($container, 'phpredis', [
    'client' => 'phpredis',
    'options' => ['prefix' => $env('REDIS_PREFIX', '')],
    'default' => ['host' => $env('REDIS_HOST', '127.0.0.1'), 'port' => (int) $env('REDIS_PORT', 6379), 'database' => (int) $env('REDIS_DB', 0)],
]);
$container->instance('redis', $redis);
// The cache's keys under "laravel_cache:" in every version: through 10.x
// RedisStore adds the ":" to its prefix, from 11.x it does not.
$store = new Illuminate\Cache\RedisStore($redis, 'laravel_cache', 'default');
if ($store->getPrefix() === 'laravel_cache') {
    $store->setPrefix('laravel_cache:');
}
$cache = new Illuminate\Cache\Repository($store);
$container->instance('cache.store', $cache);
$container->instance(Illuminate\Contracts\Cache\Repository::class, $cache);
// The cache manager, for 13.x's paused queues (cache->store()).
$container->instance('cache', new class($cache) {
    public function __construct(private $store) {}
    public function store($name = null) { return $this->store; }
    public function __call($method, $args) { return $this->store->$method(...$args); }
});
if (($key = $env('APP_KEY', '')) !== '') {
    $container->instance(Illuminate\Contracts\Encryption\Encrypter::class, new Illuminate\Encryption\Encrypter(base64_decode(substr($key, 7)), 'AES-256-CBC'));
}
$queue = new Illuminate\Queue\Capsule\Manager($container);
$queue->addConnection(['driver' => 'redis', 'connection' => 'default', 'queue' => 'default', 'retry_after' => 90], 'redis');
$queue->getContainer()['config']['queue.default'] = 'redis';
$queue->setAsGlobal();
$events->listen(Illuminate\Queue\Events\JobFailed::class, fn ($e) => App\Jobs\report('failed', $e->job->resolveName(), $e->exception->getMessage()));
if (class_exists(Illuminate\Queue\Events\JobDebounced::class)) {
    $events->listen(Illuminate\Queue\Events\JobDebounced::class, fn ($e) => App\Jobs\report('debounced', $e->job->resolveName()));
}
$worker = new Illuminate\Queue\Worker($queue->getQueueManager(), $events, $container->make(Illuminate\Contracts\Debug\ExceptionHandler::class), fn () => false);
$worker->setCache($cache);
$options = new Illuminate\Queue\WorkerOptions('default', 0, 512, 60, 0, 1, false, true, 0);
exit((int) $worker->daemon('redis', $queueName, $options));

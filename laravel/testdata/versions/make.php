<?php
// Builds the payloads of testdata/versions/<version>/ with Laravel's own
// queue code of that version, as fetched from github.com/laravel/framework
// (branches 10.x, 11.x, 12.x, 13.x; src/Illuminate only, no composer):
// Illuminate\Queue\Queue::createPayload, ::createObjectPayload and
// RedisQueue::createPayloadArray, called as RedisQueue::push and ::later
// call them, with the Illuminate classes of that version and Debian 12's
// libraries for the rest (Carbon 2, ramsey/uuid, doctrine/inflector).
// Usage: php make.php SRC VERSION OUTDIR
//   SRC is the framework's checkout (its src/Illuminate is used).
// Writes OUTDIR/<name>.json, one payload each, and prints what it wrote.
[$_, $src, $version, $out] = $argv;

require __DIR__ . '/autoload.php';


use Illuminate\Container\Container;
use Illuminate\Queue\RedisQueue;

$container = new Container;
Container::setInstance($container);
$key = random_bytes(32);
$container->instance(Illuminate\Contracts\Encryption\Encrypter::class, new Illuminate\Encryption\Encrypter(str_repeat("\x07", 32), 'AES-256-CBC'));

// A RedisQueue that is never connected: createPayload needs no Redis.
$redis = new class implements Illuminate\Contracts\Redis\Factory {
    public function connection($name = null) { throw new LogicException('no Redis here'); }
};
$queue = new RedisQueue($redis, 'default', null, 90);
$queue->setContainer($container);
$queue->setConnectionName('redis');
$create = fn ($job, $delay = null) => (fn () => $this->createPayload($job, 'default', '', $delay))->call($queue);

$jobs = [
    // RedisQueue::push($job): no delay.
    'send_welcome_email' => [new App\Jobs\SendWelcomeEmail(7, 'ada@example.com', ['welcome', 'n7']), null],
    // RedisQueue::later(30, $job): 12.x on write "delay": 30.
    'resize_avatar_later' => [new App\Jobs\ResizeAvatar(8, [64, 128], 0.5), 30],
    // A job with tries, backoff, timeout, maxExceptions, failOnTimeout.
    'flaky_report' => [new App\Jobs\FlakyReport(9), null],
    // Queue::push('App\Jobs\LegacyReport@handle', [...]): a string job.
    'string_job' => ['App\Jobs\LegacyReport@handle', null, ['reportId' => 5]],
    // ShouldBeEncrypted: data.command sealed with the key above.
    'send_secret' => [new App\Jobs\SendSecret(10, 's3cret'), null],
];
if (class_exists(Illuminate\Bus\DebounceLock::class)) {
    // 13.x: a debounced job, as PendingDispatch::acquireDebounceLock
    // leaves it: debounceOwner set to the lock's owner.
    $job = new App\Jobs\DebouncedSync(11);
    $job->debounceOwner = 'owner-of-the-newest-dispatch-0000000000000';
    $jobs['debounced_sync'] = [$job, 5];
}
@mkdir($out, 0777, true);
foreach ($jobs as $name => [$job, $delay]) {
    if (is_string($job)) {
        $payload = (fn () => $this->createPayload($job, 'default', func_get_args()[0], $delay))->call($queue, $jobs[$name][2]);
    } else {
        $payload = $create($job, $delay);
    }
    file_put_contents("$out/$name.json", $payload . "\n");
    echo "$version $name\n";
}

// The cache keys of the locks: Illuminate\Bus\UniqueLock::getKey of a
// UniqueReport(5) (protected before 12.x; none in 8.x), and from 13.x
// Illuminate\Bus\DebounceLock::getKey of the debounced job.
// 8.83 has no getKey: the key is the one acquire() locks, in an array store.
$store = new Illuminate\Cache\ArrayStore;
$unique = new Illuminate\Bus\UniqueLock(new Illuminate\Cache\Repository($store));
$keys = ['unique' => method_exists($unique, 'getKey')
    ? (fn ($job) => $this->getKey($job))->call($unique, new App\Jobs\UniqueReport(5))
    : ($unique->acquire(new App\Jobs\UniqueReport(5)) ? array_key_first((fn () => $this->locks)->call($store)) : null)];
if (class_exists(Illuminate\Bus\DebounceLock::class)) {
    $keys['debounce'] = Illuminate\Bus\DebounceLock::getKey(new App\Jobs\DebouncedSync(11));
}
file_put_contents("$out/lock_keys.json", json_encode($keys, JSON_UNESCAPED_SLASHES | JSON_PRETTY_PRINT) . "\n");
echo "$version lock_keys\n";

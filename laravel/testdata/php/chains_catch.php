<?php
// Pushes chains with Laravel's own PendingChain (what Bus::chain makes),
// each on QUEUE (onQueue, so every link goes there), some with a catch
// callback: a closure that reports "catch|CHAIN|EXCEPTION CLASS".
// Reads a JSON list from stdin: {name, catch (bool), links: [{class
// ("Scenario" or "ChargeCardPhpOnly"), name, steps, tries, backoff}]}.
// Usage: php chains_catch.php QUEUE
require __DIR__ . '/bootstrap.php';

use App\Jobs\ChargeCardPhpOnly;
use App\Jobs\Scenario;
use Illuminate\Foundation\Bus\PendingChain;

$queue = $argv[1];
$specs = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
foreach ($specs as $c) {
    $links = [];
    foreach ($c['links'] as $i => $l) {
        if ($l['class'] === 'ChargeCardPhpOnly') {
            $links[] = new ChargeCardPhpOnly($i);
            continue;
        }
        $job = new Scenario;
        $job->name = $l['name'];
        $job->steps = $l['steps'];
        $job->tries = $l['tries'] ?? null;
        $job->backoff = $l['backoff'] ?? null;
        $links[] = $job;
    }
    $chain = (new PendingChain(array_shift($links), $links))->onQueue($queue);
    if ($c['catch']) {
        $name = $c['name'];
        $chain->catch(function (Throwable $e) use ($name) {
            \report('catch', $name, get_class($e));
        });
    }
    $chain->dispatch();
}

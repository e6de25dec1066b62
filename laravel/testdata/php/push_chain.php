<?php
// Pushes two chains with Laravel's own Queueable::chain and Queue::push:
// SendWelcomeEmail(1) -> ResizeAvatar(2) -> SendWelcomeEmail(3) with the
// chain's links on the queue "chained" (allOnQueue), and
// SendWelcomeEmail(4) -> Scenario, whose class a Go worker may not know.
// Usage: php push_chain.php QUEUE
require __DIR__ . '/bootstrap.php';

use App\Jobs\ResizeAvatar;
use App\Jobs\Scenario;
use App\Jobs\SendWelcomeEmail;
use Illuminate\Queue\Capsule\Manager as Queue;

$queue = $argv[1];
$first = (new SendWelcomeEmail(1, 'one@example.com', ['chain']))
    ->chain([new ResizeAvatar(2, [2]), new SendWelcomeEmail(3, 'three@example.com', ['chain'])]);
$first->chainQueue = $queue;
Queue::push($first, '', $queue);

$s = new Scenario;
$s->name = 'unknown link';
Queue::push((new SendWelcomeEmail(4, 'four@example.com'))->chain([$s]), '', $queue);

<?php
// What `php artisan queue:restart` does: the restart signal in the cache.
require __DIR__ . '/bootstrap.php';

$cache->forever('illuminate:queue:restart', time());

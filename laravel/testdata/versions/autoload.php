<?php
// Loads Laravel's framework from its source, $src/src/Illuminate (a
// checkout of github.com/laravel/framework, or Debian's /usr/share/php
// through a link), with Debian 12's PHP libraries for what the framework
// takes from composer, then the job classes of jobs.php. Set $src first.
require_once 'Carbon/autoload.php';
require_once 'Doctrine/Inflector/autoload.php';
require_once 'Psr/Container/autoload.php';
require_once 'Psr/SimpleCache/autoload.php';
require_once 'Ramsey/Uuid/autoload.php';
require_once 'voku/helper/autoload.php';
// The framework's classes by name, as its components' composer.json map
// them (a class's file is not always under its namespace's directory:
// Illuminate\Support\Traits\Macroable is in Macroable/Traits).
$classes = [];
$files = new RecursiveIteratorIterator(new RecursiveDirectoryIterator("$src/src/Illuminate", FilesystemIterator::SKIP_DOTS));
foreach ($files as $file) {
    if ($file->getExtension() !== 'php') {
        continue;
    }
    $code = file_get_contents($file->getPathname());
    if (preg_match('/^namespace\s+([^;]+);/m', $code, $ns) && preg_match('/^(?:(?:abstract|final|readonly)\s+)*(?:class|trait|interface|enum)\s+(\w+)/m', $code, $name)) {
        $classes[$ns[1] . '\\' . $name[1]] = $file->getPathname();
    }
}
spl_autoload_register(function ($class) use ($classes) {
    if (isset($classes[$class])) {
        require $classes[$class];
    }
}, true, true);
foreach (['Support/helpers.php', 'Collections/helpers.php', 'Support/functions.php', 'Collections/functions.php', 'Events/functions.php'] as $f) {
    if (is_file("$src/src/Illuminate/$f")) {
        require_once "$src/src/Illuminate/$f";
    }
}

// PHP 8.5's array_first and array_last, which 12.x and 13.x take from
// symfony/polyfill-php85 (a composer dependency) on older PHP.
if (! function_exists('array_first')) {
    function array_first(array $array) { foreach ($array as $v) { return $v; } return null; }
    function array_last(array $array) { return $array === [] ? null : $array[array_key_last($array)]; }
}

require __DIR__ . '/jobs.php';

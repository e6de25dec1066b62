// Package sqlitetest tests the Laravel bridge's failed_jobs support
// (laravel.FailedJobs) on SQLite, against Laravel 8.83's own
// DatabaseUuidFailedJobProvider. It is a module of its own, so that
// jobgen's root module does not take a SQLite driver (modernc.org/sqlite)
// for one test. It holds no code for users.
package sqlitetest

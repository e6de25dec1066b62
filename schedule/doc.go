// Package schedule computes the ticks of periodic jobs and runs the loop
// that fires them. It knows nothing of Redis: package runtime gives each
// Runner a Fire function that claims a tick and pushes its job in one
// script call, so that a tick fires once however many runners there are.
//
// # Specs
//
// Parse reads a cron expression, with an optional leading seconds field
// ("*/10 * * * * *"), the tags @yearly, @monthly, @weekly, @daily,
// @hourly and @every DURATION. Cron fields are parsed by
// github.com/adhocore/gronx; the time zone rule is this package's.
//
// A cron spec is read on the wall clock of its zone. Two rules make
// daylight saving time do what users want, which no cron library does:
//
//   - A local time that does not exist (the hour skipped when clocks go
//     forward) runs once, at the first valid instant after it: in
//     America/New_York on 8 March 2026 a 02:30 daily runs at 03:00 EDT.
//     Several ticks in the skipped hour run once, together.
//   - A local time that occurs twice (the hour repeated when clocks go
//     back) runs once, at its first occurrence: a 01:30 daily in
//     America/New_York on 1 November 2026 runs at 01:30 EDT, not again at
//     01:30 EST. A spec that fires every few minutes therefore pauses for
//     the repeated hour; use @every (Every), which counts real time, or a
//     UTC zone for such jobs.
//
// @every d counts real time from the Unix epoch, so every process agrees
// on its ticks, and no zone applies.
package schedule

// Package schedule runs an application's periodic jobs, as Laravel's
// schedule() does: build a Schedule once, add entries that dispatch a
// job at the ticks of a spec, and run it in as many processes as you
// like. A program that only dispatches and works jobs needs package
// runtime alone; one that declares a schedule imports this package too.
//
//	s := schedule.New()
//	s.Cron("0 3 * * *", PruneCarts{}).Timezone("Europe/Paris").WithoutOverlapping()
//	s.Every(5*time.Minute, SyncCRM{})
//	s.DailyAt("09:00", SendDigest{}).Weekdays()
//	err := s.Run(ctx, engine, schedule.Config{})
//
// console.WithSchedule gives it to the schedule: commands and to
// queue:work --schedule; dashboard.Options.Schedule shows it.
//
// # Once per tick
//
// Each tick of each entry is dispatched once in all: one script call
// (runtime's Engine.PushTick) claims the tick (the entry's name and the
// tick's time, kept as the entry's last tick in a hash in the slot of
// its queue) and pushes its job. No process leads; any may stop or die.
// A process reads the time from the Redis server, so hosts whose clocks
// differ agree. A process that comes back after every one was down
// dispatches the last tick missed per entry (CatchUp(n): the last n;
// SkipMissed: none). WithoutOverlapping skips a tick while the last
// run's job is queued or running, with a unique lock of the entry's own.
//
// RunDue makes one pass (schedule:run), Status reads each entry's last
// run (schedule:list) and DispatchNow dispatches an entry now
// (schedule:test). PauseEntry stops an entry for every process that
// runs the schedule, its ticks claimed and pushing nothing, until
// ResumeEntry (schedule:pause, schedule:resume).
//
// # Specs
//
// An entry's spec is a cron expression, with an optional leading
// seconds field ("*/10 * * * * *"), a tag (@yearly, @monthly, @weekly,
// @daily, @hourly, @every DURATION), or what Laravel's frequency methods
// set (DailyAt, Weekdays, ...). Cron fields are parsed by
// github.com/adhocore/gronx; the time zone rule is this package's.
//
// # Time zones
//
// A cron spec is read on the wall clock of its zone (Timezone; UTC by
// default). Two rules make daylight saving time do what users want,
// which no cron library does:
//
//   - A local time that does not exist (the hour skipped when clocks go
//     forward) runs once, at the first valid instant after it: in
//     America/New_York on 8 March 2026 a 02:30 daily runs at 03:00 EDT.
//     Several ticks in the skipped hour run once, together.
//   - A local time that occurs twice (the hour repeated when clocks go
//     back) runs once, at its first occurrence: a 01:30 daily in
//     America/New_York on 1 November 2026 runs at 01:30 EDT, not again at
//     01:30 EST. A spec that fires every few minutes therefore pauses for
//     the repeated hour; use Every, which counts real time, or a UTC
//     zone for such jobs.
//
// Every (@every d) counts real time from the Unix epoch, so every
// process agrees on its ticks, and no zone applies.
package schedule

// Package jobprom exports Prometheus metrics for jobgen: what dispatchers
// push and workers run, and, read at scrape time, how many jobs each
// queue holds.
//
// # Wiring
//
//	m := jobprom.New(jobprom.Config{})
//	m.Instrument(engine, &workerCfg) // dispatch and worker middleware
//	w, err := runtime.NewWorker(engine, router, workerCfg)
//	m.Attach(w)                      // counts each attempt's outcome
//	prometheus.MustRegister(m, jobprom.NewQueueCollector(engine, nil))
//
// # Metrics
//
// Labels are the queue and the job's wire name (job); never the job ID,
// whose values would grow without bound.
//
//	jobgen_jobs_dispatched_total{queue,job}    jobs pushed (chain links and batch jobs included)
//	jobgen_jobs_processed_total{queue,job}     attempts that succeeded
//	jobgen_jobs_failed_total{queue,job}        jobs that failed for good (to the failed store)
//	jobgen_jobs_released_total{queue,job}      jobs released by their handler or middleware, or given back at a stop
//	jobgen_jobs_retried_total{queue,job}       jobs released for another attempt after an error or a timeout
//	jobgen_jobs_timed_out_total{queue,job}     attempts that ran past their timeout
//	jobgen_jobs_cancelled_total{queue,job}     running jobs an operator cancelled (runtime.JobCancelled)
//	jobgen_job_duration_seconds{queue,job}     histogram of how long handlers ran
//	jobgen_job_pickup_latency_seconds{queue,job} histogram of the time from ready to start
//	jobgen_job_result_bytes{queue,job}         histogram of the sizes of the results jobs stored (docs/results.md)
//	jobgen_worker_busy_slots{worker}           handlers running now, read at scrape time
//
// Pickup latency runs from when the job was ready to when its handler
// started: its dispatch time, or for a delayed job its due time, which
// the dispatch middleware writes in the header jobgen-due; for a retry,
// the time its release was due, when this process saw the release. A
// retry released by another process is not observed. A job retried from
// the failed store counts from its first dispatch.
//
// QueueCollector reads, at each scrape, every queue's sizes and paused
// flag in one round trip (runtime.Inspector.States):
//
//	jobgen_queue_jobs{queue,state}  state is ready, delayed, reserved or failed
//	jobgen_queue_paused{queue}      1 while the queue is paused
//
// and, for a queue with flow limits (docs/flow-control.md), read in
// one more round trip for all queues:
//
//	jobgen_queue_limit{queue}                 its concurrency limit, 0 for none
//	jobgen_queue_running{queue}               its jobs under lease, which the limit caps
//	jobgen_queue_rate_limit{queue}            its rate: jobs per window, 0 for none
//	jobgen_queue_rate_window_seconds{queue}   the rate's window
//	jobgen_queue_throttled_total{queue,by}    reserves held back, by "limit" or "rate"
//
// For queues that hold jobs in fair groups (docs/flow-control.md), one
// more round trip for all queues:
//
//	jobgen_queue_group_waiting{queue}         jobs waiting for their group's turn
//	jobgen_queue_group_turns{queue}           groups on the ring of turns
//	jobgen_queue_group_running{queue}         jobs holding a slot of their group's limit
//
// What trimming dropped from each queue's failed store
// (EngineConfig.FailedMaxCount, FailedMaxAge; docs/failures.md), one
// more round trip: for every queue, 0 included, when the engine's
// failed store is bounded, else for the queues trimmed before:
//
//	jobgen_failed_trimmed_total{queue}                     failed jobs dropped by trimming; alert on any increase
//	jobgen_failed_trimmed_last_timestamp_seconds{queue}    when the last trim was
//
// dashboard.json is a Grafana dashboard of these metrics.
package jobprom

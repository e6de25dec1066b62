// Package dashboard is a web UI for the queues of an engine, in the
// manner of Laravel Horizon, as an http.Handler to mount under any path.
//
// It shows every queue (ready, delayed, reserved, failed, paused, and how
// long the next job has waited), the jobs finished and failed per minute
// over the last hour and per quarter hour over the last day, the live
// workers and the jobs they run, the jobs of a queue page by page with
// their payloads, the failed jobs, a job by ID, a search by name and
// tag, batches, and a workflow by ID with its steps drawn by depth. It
// pauses and
// resumes queues, clears them, retries and forgets failed jobs one by
// one, in bulk or all of a queue (with progress), and cancels and
// retries batches and workflows. With Options.Router it dispatches jobs too, from a
// form built from the fields of a registered job type. With
// Options.Schedule, the Periodic page lists the application's periodic
// jobs (schedule.Schedule) with their spec, queue, next and last runs,
// and pauses, resumes and runs them now; without it, that page says how
// to pass one.
//
// # Mounting
//
//	engine, err := runtime.Open(ctx, url, runtime.EngineConfig{})
//	mux.Handle("/queues/", http.StripPrefix("/queues", dashboard.New(engine, dashboard.Options{
//		Authorize: dashboard.BasicAuth("admin", os.Getenv("DASHBOARD_PASSWORD")),
//		Hosts:     []string{"admin.example.com"},
//	})))
//
// Links are relative, so the handler works under any prefix that
// http.StripPrefix took off. The command jobgen dashboard --redis URL
// runs it on its own, and so does an application's binary built with
// package console (myapp dashboard).
//
// # Security
//
// The handler answers only requests whose Host header is a loopback
// name (localhost, 127.0.0.1, ::1) or one of Options.Hosts, and refuses
// others with 421: a page of another site that rebinds its name to the
// dashboard's address (DNS rebinding) reaches nothing. Set Hosts to the
// names users reach it by; the dashboard command takes them with --host,
// and refuses to listen beyond loopback with no password unless told
// --insecure, which every page then shows.
//
// Every response carries a Content-Security-Policy that allows only the
// handler's own script and style files: no inline script runs, so a
// payload, error, tag or schedule entry name that holds HTML (they come
// from whoever dispatched or ran the job, or wrote the schedule) is shown
// as text, and html/template escapes it in any case. Every action is a
// POST, refused when it comes from another origin
// (http.CrossOriginProtection) and, with Options.ReadOnly, refused
// altogether. Options.Authorize decides who may see the dashboard;
// behind an application's own sessions:
//
//	dashboard.Options{Authorize: func(w http.ResponseWriter, r *http.Request) bool {
//		if u := sessions.User(r); u != nil && u.Admin {
//			return true
//		}
//		http.Redirect(w, r, "/login", http.StatusSeeOther)
//		return false
//	}}
//
// # Live
//
// Pages are rendered on the server and read without JavaScript. With it,
// a small script of the handler's own fetches the page again every
// Options.Refresh and swaps in the parts that change (counts, charts,
// workers, progress, periodic jobs' runs), without a reload. A refresh
// that finds the page as it was is answered 304 with no body: the texts
// that change with the clock alone ("3s ago") are left out of the
// page's ETag, and the script moves them on itself.
package dashboard

// Package browsertest drives the dashboard in a real, headless Chromium
// (Debian's chromium package, through chromedp): it clicks through the
// overview, a queue, pause and resume, failed jobs retried one by one
// and in bulk, and a batch, asserts what each page shows, checks that
// attacker-controlled text stays text and that nothing overflows or
// overlaps at 1280×800 and 390×844, and saves screenshots
// ($JOBGEN_SCREENSHOTS, or the test's temporary directory).
//
// It is a module of its own so that the root module does not require
// chromedp. Without a browser the tests skip, except in CI ($JOBGEN_CI,
// which scripts/test sets, or CI=true), where they fail.
package browsertest

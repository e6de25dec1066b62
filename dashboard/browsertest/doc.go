// Package browsertest drives the dashboard in a real, headless Chromium
// (Debian's chromium package, through chromedp): it clicks through the
// overview, a queue, pause and resume, failed jobs retried one by one
// and in bulk, and a batch, asserts what each page shows, checks that
// attacker-controlled text stays text and that nothing overflows or
// overlaps at 1280×800 and 390×844, and saves screenshots
// ($JOBGEN_SCREENSHOTS, or the test's temporary directory).
//
// A sweep (sweep_test.go) opens every page, one line of sweepPages each,
// at both sizes over a Redis filled with hostile data: queue names of
// markup, of 120 characters, with a right-to-left override, in Arabic
// and Hebrew, and "billing: eu/é x", which needs escaping; jobs with
// five tags of 30 characters. It fails on a dialog, an injected element,
// anything past the window's edge outside the boxes that scroll, a
// squeezed cell, a tag broken over lines or past its cell, a table
// without the dashboard's style, or a hidden bidirectional control, and
// saves a full-page screenshot of each. TestSweepCoversEveryRoute fails
// when a GET route has no line in sweepPages. Every action of every
// page is driven on the escaped queue name, and checked in Redis
// (escaped_actions_test.go).
//
// It is a module of its own so that the root module does not require
// chromedp. Without a browser the tests skip, except in CI ($JOBGEN_CI,
// which scripts/test sets, or CI=true), where they fail.
package browsertest

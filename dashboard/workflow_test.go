package dashboard_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/dashboard"
	"github.com/jobgen/jobgen/runtime"
)

// The jobs of the workflow tests: wfTotal records a result, wfCard
// fails for good at once, wfLine is one of many.
type wfTotal struct{ Order string }

func (wfTotal) JobName() string                { return "shop.Total" }
func (wfTotal) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "pay"} }
func (j wfTotal) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfCard struct{ Order string }

func (wfCard) JobName() string                { return "shop.Card" + evil }
func (wfCard) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "pay", Tries: 1} }
func (j wfCard) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

type wfLine struct{ N int }

func (wfLine) JobName() string                { return "shop.Line" }
func (wfLine) JobOptions() runtime.JobOptions { return runtime.JobOptions{Queue: "lines"} }
func (j wfLine) EncodeJob() ([]byte, error)   { return runtime.Encode(j) }

func wfRouter() *runtime.Router {
	r := runtime.NewRouter()
	runtime.RegisterResult(r, "shop.Total", func(ctx context.Context, j wfTotal) (int, error) { return 1250, nil })
	runtime.Register(r, "shop.Card"+evil, func(ctx context.Context, j wfCard) error { return errors.New("declined " + evil) })
	runtime.RegisterResult(r, "shop.Line", func(ctx context.Context, j wfLine) (int, error) {
		if j.N%100 == 7 {
			return 0, runtime.FailRequest(errors.New("line refused"))
		}
		return j.N, nil
	})
	runtime.Register(r, "test.Note", func(ctx context.Context, j note) error { return nil })
	return r
}

func runWorkflowJobs(t *testing.T, ctx context.Context, e *runtime.Engine) {
	t.Helper()
	w, err := runtime.NewWorker(e, wfRouter(), runtime.WorkerConfig{Queues: []string{"pay", "lines", "mail"}, StopWhenEmpty: true,
		Concurrency: 8, Sleep: 10 * time.Millisecond, Logger: quiet})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	require.NoError(t, w.Run(ctx))
}

// A workflow whose ID and job name hold markup: its page draws each
// step by state, escaped, linking the steps that were pushed to their
// jobs; it is retried and cancelled by its buttons, from its own origin
// only; an unknown ID is named, a malformed one refused.
func TestWorkflowPage(t *testing.T) {
	t.Parallel()
	b := setup(t, dashboard.Options{})
	id := "order 17 " + evil
	wf := runtime.NewWorkflow().WithID(id)
	total := runtime.AddStep(wf, wfTotal{Order: "17"})
	card := runtime.AddStep(wf, wfCard{Order: "17"})
	runtime.AddStep(wf, note{Text: "shipped"}, runtime.After(total, card), runtime.StepOnQueue("mail"))
	_, err := wf.Dispatch(b.ctx)
	require.NoError(t, err)
	runWorkflowJobs(t, b.ctx, b.engine)
	info, err := runtime.NewInspector(b.engine).Workflow(b.ctx, id)
	require.NoError(t, err)
	require.Equal(t, runtime.WorkflowFailed, info.State)

	page := "workflows/" + url.PathEscape(id)
	status, body, _ := b.get(t, page)
	require.Equal(t, http.StatusOK, status, body)
	require.NotContains(t, body, evil)
	require.Contains(t, body, html.EscapeString("order 17 "+evil))
	require.Contains(t, body, html.EscapeString("shop.Card"+evil))
	require.Regexp(t, `<g class="wf-node st-succeeded"[^>]*><title>step 0: shop.Total on pay`, body)
	require.Contains(t, body, `class="wf-node st-failed"`)
	require.Contains(t, body, `class="wf-node st-dropped"`)
	require.Contains(t, body, `<a href="../jobs/`+info.Steps[0].JobID+`?queue=pay">`, "a pushed step links to its job")
	require.NotContains(t, body, `jobs/`+info.Steps[2].JobID+`?`, "a dropped step was never pushed: no link")
	require.Equal(t, 2, strings.Count(body, `<line class="wf-edge wait"`), "the last step waits for the other two")
	require.Contains(t, body, `id="retry-workflow"`)
	require.NotContains(t, body, `id="cancel-workflow"`)
	require.Contains(t, body, `action="../workflows/`+url.PathEscape(id)+`/retry"`)

	// From the form: the ID goes into the path escaped.
	status, _, hdr := b.get(t, "workflows?id="+url.QueryEscape(id))
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "./workflows/"+url.PathEscape(id), hdr.Get("Location"))
	status, body, _ = b.get(t, "workflows")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `action="./workflows"`)
	status, body, _ = b.get(t, "batches")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `action="./workflows"`, "the batches page opens a workflow by ID")

	// Another origin is refused; the page's own retries, then cancels.
	res := b.post(t, page+"/retry", nil, "https://evil.example")
	require.Equal(t, http.StatusForbidden, res.StatusCode)
	res = b.post(t, page+"/retry", nil, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	require.Equal(t, "../../workflows/"+url.PathEscape(id), res.Header.Get("Location"))
	_, body, _ = b.get(t, page)
	require.Contains(t, body, `id="cancel-workflow"`)
	require.Contains(t, body, `class="wf-node st-released"`)
	// The step's job, queued again, links back to its workflow.
	info, err = runtime.NewInspector(b.engine).Workflow(b.ctx, id)
	require.NoError(t, err)
	status, body, _ = b.get(t, "jobs/"+info.Steps[1].JobID+"?queue=pay")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `<a href="../workflows/`+url.PathEscape(id)+`" id="job-workflow">`+html.EscapeString(id)+`</a>, step <bdi>1</bdi>`)
	require.NotContains(t, body, evil)
	res = b.post(t, page+"/cancel", nil, b.srv.URL)
	require.Equal(t, http.StatusSeeOther, res.StatusCode)
	info, err = runtime.NewInspector(b.engine).Workflow(b.ctx, id)
	require.NoError(t, err)
	require.Equal(t, runtime.WorkflowCancelled, info.State)
	res = b.post(t, page+"/cancel", nil, b.srv.URL)
	require.Equal(t, http.StatusConflict, res.StatusCode, "a workflow that ended is not cancelled again")

	status, body, _ = b.get(t, "workflows/"+url.PathEscape("no "+evil))
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "No workflow no "+html.EscapeString(evil))
	require.NotContains(t, body, evil)
	status, body, _ = b.get(t, "workflows/"+url.PathEscape("a{b},c"))
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "must be 1 to 100 bytes")
	res = b.post(t, "workflows/nope/cancel", nil, b.srv.URL)
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

// A workflow of 1,502 steps (one, 1,500 after it, one after those) costs
// its page the same few Redis commands as a small one: it is read once,
// without its results' sizes, and each layer draws wfPerLayer steps,
// failed ones first, and counts the others.
func TestWorkflowPageStaysCheap(t *testing.T) {
	t.Parallel()
	o := setupOwn(t, runtime.EngineConfig{})
	wf := runtime.NewWorkflow().OnStepFailure(runtime.ContinueWorkflow)
	first := runtime.AddStep(wf, wfTotal{Order: "big"})
	lines := make([]wfLine, 1500)
	for i := range lines {
		lines[i] = wfLine{N: i}
	}
	many := runtime.AddSteps(wf, lines, runtime.After(first))
	parents := make([]runtime.Parent, len(many))
	for i, s := range many {
		parents[i] = s
	}
	runtime.AddStep(wf, note{Text: "summary"}, runtime.After(parents...), runtime.StepOnQueue("mail"))
	id, err := wf.Dispatch(o.ctx)
	require.NoError(t, err)
	runWorkflowJobs(t, o.ctx, o.engine)

	status, body, n := o.counted(t, "workflows/"+url.PathEscape(id))
	require.Equal(t, http.StatusOK, status, body)
	require.LessOrEqual(t, n, int64(maxPageCommands))
	require.LessOrEqual(t, n, int64(10), "one read of the workflow")
	require.Equal(t, 1+12+1+1, strings.Count(body, `<g class="wf-node`), "12 steps of the middle layer drawn, and a box for the rest")
	require.Equal(t, 15, strings.Count(body, `<g class="wf-node st-failed"`)+strings.Count(body, `<g class="wf-node st-succeeded"`)+strings.Count(body, `<g class="wf-node wf-more"`)+strings.Count(body, `<g class="wf-node st-released"`))
	require.Len(t, regexp.MustCompile(`<g class="wf-node st-failed"[^>]*><title>step \d+: shop.Line`).FindAllString(body, -1), 12, "failed steps are drawn first: 15 of the 1,500 failed")
	require.Contains(t, body, "+1488 more")
	require.Contains(t, body, "3 failed, 1485 succeeded")
	require.Contains(t, body, "The first 100 steps of 1502")
}

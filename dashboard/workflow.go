package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jobgen/jobgen/runtime"
)

// A workflow's page: its state, a drawing of its steps layered by depth
// (a step's depth is one more than its deepest parent's), each coloured
// by its state and linked to its job's page, and buttons to cancel or
// retry it. It reads the workflow once (Inspector.WorkflowGraph, six
// Redis commands whatever its size) and draws at most wfPerLayer steps
// of a layer and wfLayers layers: the others are counted by state.

// wfPerLayer is the most steps drawn in one layer; wfLayers, the most
// layers; wfRows, the most steps listed in the table under the drawing.
const (
	wfPerLayer = 12
	wfLayers   = 30
	wfRows     = 100
	wfEdges    = 2000
)

// The drawing's measures, in px.
const (
	wfNodeW = 176
	wfNodeH = 58
	wfGapX  = 14
	wfGapY  = 56
	wfPad   = 10
)

// wfNode is a step as drawn.
type wfNode struct {
	runtime.WorkflowStepInfo
	X, Y       int
	ShortName  string // the job's name, cut to fit
	ShortQueue string // the queue's name, cut to fit
	Link       bool   // its job may have a page: it was pushed
}

// wfSummary is the box that counts the steps of a layer not drawn.
type wfSummary struct {
	X, Y   int
	More   int
	Counts []wfCount
}

// wfCount is a number of steps in one state.
type wfCount struct {
	State runtime.StepState
	N     int
}

// wfEdge is a line from a parent's box to a child's.
type wfEdge struct {
	X1, Y1, X2, Y2 int
	Wait           bool // the child only waits for the parent (After), or was spawned by it
}

// wfLayer is the steps of one depth.
type wfLayer struct {
	Depth   int
	Nodes   []wfNode
	Summary *wfSummary
}

// wfGraph is the drawing.
type wfGraph struct {
	Width, Height int
	Layers        []wfLayer
	Edges         []wfEdge
	// HiddenLayers are the layers past wfLayers, HiddenSteps their steps
	// and HiddenCounts those by state.
	HiddenLayers, HiddenSteps int
	HiddenCounts              []wfCount
	// CutEdges is how many lines were left out past wfEdges.
	CutEdges int
}

// stepOrder is the order of the states in counts, and of interest when
// a layer has more steps than are drawn: failed and running steps first.
var stepOrder = []runtime.StepState{runtime.StepFailed, runtime.StepReleased, runtime.StepWaiting, runtime.StepDropped, runtime.StepSucceeded}

// parentsOf are the steps step s comes after: those it needs, those it
// waits for, and for a spawned step ("<spawner>.<k>") its spawner.
func parentsOf(s runtime.WorkflowStepInfo) (ps []string, waits map[string]bool) {
	waits = map[string]bool{}
	ps = append(ps, s.Needs...)
	for _, p := range s.Waits {
		if !slices.Contains(ps, p) {
			ps = append(ps, p)
			waits[p] = true
		}
	}
	if i := strings.LastIndexByte(s.ID, '.'); i > 0 && !slices.Contains(ps, s.ID[:i]) {
		ps = append(ps, s.ID[:i])
		waits[s.ID[:i]] = true
	}
	return ps, waits
}

// depths gives each step its depth: 0 for a step with no parent, else
// one more than its deepest parent's. A parent the workflow does not
// hold, or a cycle, counts as none.
func depths(steps []runtime.WorkflowStepInfo) map[string]int {
	byID := make(map[string]int, len(steps))
	for i, s := range steps {
		byID[s.ID] = i
	}
	depth := make([]int, len(steps))
	state := make([]uint8, len(steps)) // 0 not seen, 1 on the way, 2 done
	var visit func(i int) int
	visit = func(i int) int {
		switch state[i] {
		case 2:
			return depth[i]
		case 1:
			return -1
		}
		state[i] = 1
		d := 0
		ps, _ := parentsOf(steps[i])
		for _, p := range ps {
			if k, ok := byID[p]; ok {
				if pd := visit(k); pd >= 0 {
					d = max(d, pd+1)
				}
			}
		}
		depth[i], state[i] = d, 2
		return d
	}
	out := make(map[string]int, len(steps))
	for i, s := range steps {
		out[s.ID] = visit(i)
	}
	return out
}

// countStates counts steps by state, in stepOrder.
func countStates(steps []runtime.WorkflowStepInfo) []wfCount {
	n := map[runtime.StepState]int{}
	for _, s := range steps {
		n[s.State]++
	}
	var out []wfCount
	for _, st := range stepOrder {
		if n[st] > 0 {
			out = append(out, wfCount{st, n[st]})
		}
	}
	return out
}

// clip makes the hidden controls of s visible, as the page does, and
// cuts it to n characters.
func clip(s string, n int) string {
	var b strings.Builder
	for _, r := range s {
		if hiddenControl(r) {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		} else {
			b.WriteRune(r)
		}
	}
	s = b.String()
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// drawWorkflow lays out w's steps.
func drawWorkflow(w *runtime.WorkflowInfo) wfGraph {
	var g wfGraph
	d := depths(w.Steps)
	var byDepth [][]runtime.WorkflowStepInfo
	for _, s := range w.Steps {
		k := d[s.ID]
		for len(byDepth) <= k {
			byDepth = append(byDepth, nil)
		}
		byDepth[k] = append(byDepth[k], s)
	}
	if len(byDepth) > wfLayers {
		var hidden []runtime.WorkflowStepInfo
		for _, l := range byDepth[wfLayers:] {
			hidden = append(hidden, l...)
		}
		g.HiddenLayers, g.HiddenSteps, g.HiddenCounts = len(byDepth)-wfLayers, len(hidden), countStates(hidden)
		byDepth = byDepth[:wfLayers]
	}
	// at is where each drawn step's box is; summaryOf, the summary box a
	// step of a layer is counted in.
	type box struct{ x, y int }
	at := map[string]box{}
	summaryOf := map[string]box{}
	for k, steps := range byDepth {
		y := wfPad + k*(wfNodeH+wfGapY)
		l := wfLayer{Depth: k}
		shown := steps
		if len(steps) > wfPerLayer {
			rank := func(s runtime.WorkflowStepInfo) int { return slices.Index(stepOrder, s.State) }
			order := slices.Clone(steps)
			slices.SortStableFunc(order, func(a, b runtime.WorkflowStepInfo) int { return rank(a) - rank(b) })
			// The most telling first, so that a narrow window shows them
			// without scrolling; in the order of their IDs within a state.
			shown = order[:wfPerLayer]
			rest := order[wfPerLayer:]
			sx := wfPad + len(shown)*(wfNodeW+wfGapX)
			l.Summary = &wfSummary{X: sx, Y: y, More: len(rest), Counts: countStates(rest)}
			for _, s := range rest {
				summaryOf[s.ID] = box{sx, y}
			}
		}
		for i, s := range shown {
			x := wfPad + i*(wfNodeW+wfGapX)
			at[s.ID] = box{x, y}
			l.Nodes = append(l.Nodes, wfNode{WorkflowStepInfo: s, X: x, Y: y, ShortName: clip(s.Name, 24), ShortQueue: clip(s.Queue, 24),
				Link: s.JobID != "" && s.State != runtime.StepWaiting && s.State != runtime.StepDropped})
		}
		cols := len(l.Nodes)
		if l.Summary != nil {
			cols++
		}
		g.Width = max(g.Width, 2*wfPad+cols*(wfNodeW+wfGapX)-wfGapX)
		g.Layers = append(g.Layers, l)
	}
	g.Height = 2*wfPad + len(g.Layers)*(wfNodeH+wfGapY) - wfGapY
	for _, l := range g.Layers {
		for _, n := range l.Nodes {
			ps, waits := parentsOf(n.WorkflowStepInfo)
			from := map[box]bool{}
			for _, p := range ps {
				b, ok := at[p]
				if !ok {
					if b, ok = summaryOf[p]; !ok || from[b] {
						continue
					}
				}
				from[b] = true
				if len(g.Edges) >= wfEdges {
					g.CutEdges++
					continue
				}
				g.Edges = append(g.Edges, wfEdge{X1: b.x + wfNodeW/2, Y1: b.y + wfNodeH, X2: n.X + wfNodeW/2, Y2: n.Y, Wait: waits[p]})
			}
		}
	}
	return g
}

func (h *handler) findWorkflow(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimSpace(r.URL.Query().Get("id"))
	if id == "" {
		h.render(w, r, "workflow", "Workflows", map[string]any{"Ask": true}, true)
		return
	}
	seeOther(w, base(r)+"workflows/"+url.PathEscape(id))
}

func (h *handler) workflow(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	wf, err := h.ins.WorkflowGraph(r.Context(), id)
	switch {
	case errors.Is(err, runtime.ErrInvalid):
		h.renderStatus(w, r, http.StatusBadRequest, "workflow", "Workflows", map[string]any{"Ask": true, "Invalid": errText(err)}, true)
		return
	case errors.Is(err, runtime.ErrNoWorkflow):
		h.renderStatus(w, r, http.StatusNotFound, "workflow", "Workflows", map[string]any{"Ask": true, "Missing": id}, true)
		return
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, err)
		return
	}
	rows := wf.Steps
	if len(rows) > wfRows {
		rows = rows[:wfRows]
	}
	h.render(w, r, "workflow", "Workflow "+id, map[string]any{
		"Workflow": wf, "Graph": drawWorkflow(wf), "Counts": countStates(wf.Steps), "Rows": rows, "MaxRows": wfRows,
		"PerLayer": wfPerLayer, "MaxLayers": wfLayers,
	}, wf.State != runtime.WorkflowRunning)
}

// errText is err's message without the runtime's "jobgen: ".
func errText(err error) string { return strings.TrimPrefix(err.Error(), "jobgen: ") }

func (h *handler) cancelWorkflow(w http.ResponseWriter, r *http.Request) {
	h.workflowAct(w, r, h.ins.CancelWorkflow)
}

func (h *handler) retryWorkflow(w http.ResponseWriter, r *http.Request) {
	h.workflowAct(w, r, h.ins.RetryWorkflow)
}

// workflowAct runs act on the workflow of the path, and goes back to its
// page.
func (h *handler) workflowAct(w http.ResponseWriter, r *http.Request, act func(context.Context, string) error) {
	id := r.PathValue("id")
	err := act(r.Context(), id)
	switch {
	case errors.Is(err, runtime.ErrNoWorkflow):
		h.failf(w, r, http.StatusNotFound, "no workflow %s: unknown, or past its retention", id)
	case errors.Is(err, runtime.ErrWorkflowEnded), errors.Is(err, runtime.ErrInvalid):
		h.failf(w, r, http.StatusConflict, "%s; nothing changed", errText(err))
	case err != nil:
		h.fail(w, r, http.StatusBadGateway, err)
	default:
		redirect(w, r, "workflows/"+url.PathEscape(id))
	}
}

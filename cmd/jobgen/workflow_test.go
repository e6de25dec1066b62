package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// workflowCase is the golden case of jobs that are steps of a workflow.
const workflowCase = "testdata/workflows"

// TestWorkflowGolden: the workflows case (a diamond Charge and
// ReserveStock before Ship, a fan-in of SendEmail steps into Summary,
// which handles itself) generates its inputs structs, decoders, AddTo
// and SpawnAfter as committed, and they compile and vet. TestGolden
// checks it among all the cases; this runs it alone.
func TestWorkflowGolden(t *testing.T) {
	t.Parallel()
	checkGolden(t, workflowCase)
	buildGolden(t, "./"+workflowCase)
}

// TestWorkflowStepsAreTyped: the generated AddTo takes the steps a job
// needs as typed handles, so a workflow built with a step of the wrong
// job, a single step for a list, or a step too few does not compile.
// Each use is added to the golden package through go build -overlay,
// which leaves the tree as it is; the first use compiles, so the others
// fail for their mistake alone.
func TestWorkflowStepsAreTyped(t *testing.T) {
	t.Parallel()
	const src = `package workflows

import "github.com/jobgen/jobgen/runtime"

func buildOrder() *runtime.Workflow {
	wf := runtime.NewWorkflow()
	charge := runtime.AddStep(wf, Charge{OrderID: "1"})
	stock := runtime.AddStep(wf, ReserveStock{OrderID: "1"})
	emails := runtime.AddSteps(wf, []SendEmail{{To: "a"}, {To: "b"}})
	ship := Ship{OrderID: "1"}.%s
	Summary{OrderID: "1"}.%s
	return wf
}
`
	tests := []struct {
		name       string
		ship, summ string
		want       []string // in the compiler's error; none if it compiles
	}{
		{name: "typed steps", ship: "AddTo(wf, charge, stock)", summ: "AddTo(wf, ship, emails, runtime.StepMayFail())"},
		{name: "swapped steps", ship: "AddTo(wf, stock, charge)", summ: "AddTo(wf, ship, emails)",
			want: []string{"cannot use stock", "Step[ReserveStock]) as ", "Step[Charge] value in argument to Ship{…}.AddTo"}},
		{name: "one step for a list", ship: "AddTo(wf, charge, stock)", summ: "AddTo(wf, ship, emails[0])",
			want: []string{"cannot use emails[0]", "Step[SendEmail]) as ", "Steps[SendEmail] value in argument to Summary{…}.AddTo"}},
		{name: "a step too few", ship: "AddTo(wf, charge)", summ: "AddTo(wf, ship, emails)",
			want: []string{"not enough arguments in call to Ship{…}.AddTo"}},
	}
	dir, err := filepath.Abs(workflowCase)
	require.NoError(t, err)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			use := filepath.Join(tmp, "use.go")
			require.NoError(t, os.WriteFile(use, fmt.Appendf(nil, src, tt.ship, tt.summ), 0o644))
			overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(dir, "use_overlay.go"): use}})
			require.NoError(t, err)
			ov := filepath.Join(tmp, "overlay.json")
			require.NoError(t, os.WriteFile(ov, overlay, 0o644))
			out, err := exec.Command("go", "build", "-overlay", ov, "./"+workflowCase).CombinedOutput()
			if len(tt.want) == 0 {
				require.NoError(t, err, "%s", out)
				return
			}
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, string(out), w)
			}
		})
	}
}

package emit

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// TestWorkflowParamNames: the step parameters of AddTo and SpawnAfter
// are named after the jobs needed, in lower camel case, and one that
// would be a keyword, shadow a name the bodies use, or repeat another,
// gets a suffix.
func TestWorkflowParamNames(t *testing.T) {
	needs := func(names ...string) model.Job {
		j := model.Job{TypeName: "Ship"}
		for _, n := range names {
			list := n[0] == '*'
			if list {
				n = n[1:]
			}
			j.Needs = append(j.Needs, model.Need{TypeName: n, List: list})
		}
		return j
	}
	tests := []struct {
		job  model.Job
		want []string
	}{
		{needs("Charge", "ReserveStock", "*SendEmail"), []string{"charge", "reserveStock", "sendEmail"}},
		{needs("HTTPCall", "ID", "X"), []string{"httpCall", "id", "x"}},
		{needs("Type", "*Func", "Runtime", "Wf", "Opts", "J", "Ctx"), []string{"typeStep", "funcSteps", "runtimeStep", "wfStep", "optsStep", "jStep", "ctxStep"}},
		{needs("Charge", "charge", "chargeStep", "ChargeStep"), []string{"charge", "chargeStep", "chargeStepStep", "chargeStepStep2"}},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, paramNames(tt.job))
	}
}

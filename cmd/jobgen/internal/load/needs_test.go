package load

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// TestLoadWorkflowNeeds: needs= resolves to the needed jobs, their wire
// names (a custom name= among them) and result types, in order, with
// the "[]" of a list kept; a job's own Handle method that takes its
// inputs handles it.
func TestLoadWorkflowNeeds(t *testing.T) {
	t.Parallel()
	p, err := loadSource(t, `package orders

import "context"

type Receipt struct{ ID string }

type Sent struct{ ID string }

//job:result=Receipt
type Charge struct{ OrderID string }

//job:result=Sent name=mail.send
type SendEmail struct{ To string }

//job:queue=orders needs=Charge,[]SendEmail result=Receipt
type Ship struct{ OrderID string }

//job:needs=Ship
type Done struct{ OrderID string }

func (j Done) Handle(ctx context.Context, in DoneInputs) error { return nil }
`)
	require.NoError(t, err)
	byType := map[string]model.Job{}
	for _, j := range p.Jobs {
		byType[j.TypeName] = j
	}
	ship := byType["Ship"]
	require.Equal(t, []model.Need{
		{TypeName: "Charge", Name: "orders.Charge", Result: "Receipt"},
		{TypeName: "SendEmail", Name: "mail.send", Result: "Sent", List: true},
	}, ship.Needs)
	require.Equal(t, []string{"orders.Charge", "[]mail.send"}, ship.Options.Needs)
	require.Equal(t, "orders", ship.Options.Queue)
	require.False(t, ship.HandleMethod)
	done := byType["Done"]
	require.True(t, done.HandleMethod)
	require.Equal(t, []string{"orders.Ship"}, done.Options.Needs)
	require.Empty(t, byType["Charge"].Needs)
	require.Empty(t, byType["Charge"].Options.Needs)
}

// TestLoadWorkflowErrors: each mistake in needs= is refused at the
// file:line:col of the key (or of the method or declaration at fault),
// so that no workflow that could not be built, and no handler that does
// not take the inputs, is generated.
func TestLoadWorkflowErrors(t *testing.T) {
	t.Parallel()
	const results = "type R struct{ B int }\n\n" // lines 3 and 4
	tests := []struct {
		name string
		src  string // the body of jobs.go after "package mail\n\n"
		want []string
	}{
		{
			name: "need of a job without a result",
			src:  "//job:\ntype Charge struct{ X int }\n\n//job:needs=Charge\ntype Ship struct{ X int }\n",
			want: []string{"jobs.go:6:7: needs=Charge: Charge declares no result; add result= to its annotation, the type its handler returns"},
		},
		{
			name: "need of an undeclared type",
			src:  "//job:queue=q needs=Nope\ntype Ship struct{ X int }\n",
			want: []string{"jobs.go:3:15: needs=Nope: package mail declares no type Nope; name a job type of this package"},
		},
		{
			name: "need of a type that is no job",
			src:  "type Plain struct{ X int }\n\n//job:needs=[]Plain\ntype Ship struct{ X int }\n",
			want: []string{"jobs.go:5:7: needs=[]Plain: Plain is not a job of package mail: it has no //job: annotation (an event or a listener is no job either); a step needs jobs of its own package"},
		},
		{
			name: "need of an event",
			src:  "//job:event\ntype Paid struct{ X int }\n\n//job:needs=Paid\ntype Ship struct{ X int }\n",
			want: []string{"jobs.go:6:7: needs=Paid: Paid is not a job of package mail: it has no //job: annotation (an event or a listener is no job either); a step needs jobs of its own package"},
		},
		{
			name: "need of a job with problems of its own is not reported again",
			src:  results + "//job:result=R tries=0\ntype Charge struct{ X int }\n\n//job:needs=Charge\ntype Ship struct{ X int }\n",
			want: []string{"jobs.go:5:16: tries=0: want a whole number of at least 1"},
		},
		{
			name: "self-need",
			src:  results + "//job:result=R needs=Ship\ntype Ship struct{ X int }\n",
			want: []string{"jobs.go:5:16: needs=Ship: Ship needs itself; a step is handed the results of steps added before it"},
		},
		{
			name: "same need twice",
			src:  results + "//job:result=R\ntype Charge struct{ X int }\n\n//job:needs=Charge,[]Charge\ntype Ship struct{ X int }\n",
			want: []string{"jobs.go:8:7: needs=[]Charge: Charge is needed twice; name each job once (its inputs have one field per job)"},
		},
		{
			name: "cycle of two",
			src:  results + "//job:result=R needs=B\ntype A struct{ X int }\n\n//job:result=R needs=A\ntype B struct{ X int }\n",
			want: []string{"jobs.go:5:16: needs=B: the needs of A form a cycle, A → B → A, so no workflow could be built (a step is added after the steps it needs); drop one of them"},
		},
		{
			name: "cycle of three, reported once, from its first job by name",
			src: results +
				"//job:result=R needs=[]Zed\ntype Mid struct{ X int }\n\n" + // line 5
				"//job:result=R needs=Mid\ntype Bee struct{ X int }\n\n" + // line 8
				"//job:result=R needs=Bee\ntype Zed struct{ X int }\n\n" + // line 11
				"//job:needs=Zed\ntype After struct{ X int }\n",
			want: []string{"jobs.go:8:16: needs=Mid: the needs of Bee form a cycle, Bee → Mid → Zed → Bee, so no workflow could be built (a step is added after the steps it needs); drop one of them"},
		},
		{
			name: "Handle that does not take the inputs",
			src:  "import \"context\"\n\n" + "type R struct{ B int }\n\n//job:result=R\ntype Charge struct{ X int }\n\n//job:needs=Charge\ntype Ship struct{ X int }\n\nfunc (Ship) Handle(ctx context.Context) error { return nil }\n",
			want: []string{"jobs.go:13:13: Ship.Handle is not Handle(ctx context.Context, in ShipInputs) error, as needs= wants; give it that signature to handle the job itself, or rename it"},
		},
		{
			name: "Handle that takes another type",
			src:  "import \"context\"\n\n" + "type R struct{ B int }\n\n//job:result=R\ntype Charge struct{ X int }\n\n//job:needs=Charge\ntype Ship struct{ X int }\n\nfunc (Ship) Handle(ctx context.Context, in R) error { return nil }\n",
			want: []string{"jobs.go:13:13: Ship.Handle is not Handle(ctx context.Context, in ShipInputs) error, as needs= wants; give it that signature to handle the job itself, or rename it"},
		},
		{
			name: "Handle of a job with needs and a result that returns none",
			src:  "import \"context\"\n\n" + "type R struct{ B int }\n\n//job:result=R\ntype Charge struct{ X int }\n\n//job:needs=Charge result=R\ntype Ship struct{ X int }\n\nfunc (Ship) Handle(ctx context.Context, in ShipInputs) error { return nil }\n",
			want: []string{"jobs.go:13:13: Ship.Handle is not Handle(ctx context.Context, in ShipInputs) (R, error), as needs= and result=R want; give it that signature to handle the job itself, or rename it"},
		},
		{
			name: "needs on a listener",
			src:  results + "//job:event\ntype Paid struct{ X int }\n\n//job:result=R\ntype Charge struct{ X int }\n\n//job:listen=Paid needs=Charge\ntype OnPaid struct{}\n",
			want: []string{"jobs.go:12:6: listener OnPaid may not set needs: a listener's job carries its event and runs when it is fired, not as a step of a workflow"},
		},
		{
			name: "needs with laravel",
			src:  results + "//job:result=R\ntype Charge struct{ X int }\n\n//job:needs=Charge laravel=App\\Jobs\\Ship\ntype Ship struct{ X int }\n",
			want: []string{"jobs.go:8:7: Ship sets both needs and laravel: a job that needs results runs only as a step of a workflow, which a Laravel app does not dispatch; drop one of them"},
		},
		{
			name: "package-level name the generated inputs take",
			src:  results + "//job:result=R\ntype Charge struct{ X int }\n\n//job:needs=Charge\ntype Ship struct{ X int }\n\ntype ShipInputs struct{}\n",
			want: []string{"jobs.go:11:6: package-level ShipInputs clashes with the generated jobs_gen.go, which declares it for the needs of Ship; rename it"},
		},
		{
			name: "field named like a step method",
			src:  results + "//job:result=R\ntype Charge struct{ X int }\n\n//job:needs=Charge\ntype Ship struct {\n\tX     int\n\tAddTo string\n}\n",
			want: []string{"jobs.go:11:2: field Ship.AddTo clashes with the method AddTo that jobgen generates on every job; rename the field"},
		},
		{
			name: "need that is no type name",
			src:  "//job:needs=Charge,a.b\ntype Ship struct{ X int }\n",
			want: []string{`jobs.go:3:7: needs=Charge,a.b: item 2 ("a.b"): want the name of a job type of this package, or []Name for a list of its steps, such as needs=Charge,[]SendEmail`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadSource(t, "package mail\n\n"+tt.src)
			require.Error(t, err)
			require.Equal(t, tt.want, problems(t, err))
		})
	}
}

package load

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

func TestLoadEvents(t *testing.T) {
	t.Parallel()
	p, err := loadSource(t, `package shop

//job:event
type Shipped struct{ OrderID string }

//job:listen=Shipped queue=mail tries=3
type Mail struct{}

//job:listen=Shipped sync name=shop.audit
type Audit struct{}

//job:event
type Counted struct{ SKU string }
`)
	require.NoError(t, err)
	mail := model.Listener{TypeName: "Mail", Name: "shop.Mail", Event: "Shipped", Options: model.Options{Queue: "mail", Tries: 3}}
	audit := model.Listener{TypeName: "Audit", Name: "shop.audit", Event: "Shipped", Sync: true}
	require.Equal(t, []model.Listener{audit, mail}, p.Listeners)
	require.Equal(t, []model.Event{{TypeName: "Counted"}, {TypeName: "Shipped", Listeners: []model.Listener{audit, mail}}}, p.Events)
	require.Empty(t, p.Jobs)
}

func TestLoadEventErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string // the body of jobs.go after "package mail\n\n"
		want []string
	}{
		{
			name: "listener of an event that does not exist",
			src:  "//job:event\ntype Shipped struct{ ID string }\n\n//job:listen=Shiped queue=mail\ntype Notice struct{}\n",
			want: []string{"jobs.go:7:6: listener Notice listens to Shiped, which is not a //job:event type of package mail"},
		},
		{
			name: "listener of a job",
			src:  "//job:\ntype Send struct{ ID string }\n\n//job:listen=Send\ntype Notice struct{}\n",
			want: []string{"jobs.go:7:6: listener Notice listens to Send, which is not a //job:event type of package mail"},
		},
		{
			name: "bad listen value",
			src:  "//job:listen=a.B\ntype Notice struct{}\n",
			want: []string{"jobs.go:3:7: listen=a.B: want the name of an event type of this package, such as listen=OrderShipped"},
		},
		{
			name: "event with job keys",
			src:  "//job:event queue=mail tries=2\ntype Shipped struct{ ID string }\n",
			want: []string{"jobs.go:4:6: event Shipped takes no keys but event (it has queue, tries): an event is not queued itself; set queue, tries and the rest on its listeners"},
		},
		{
			name: "listener with fields",
			src:  "//job:event\ntype Shipped struct{ ID string }\n\n//job:listen=Shipped\ntype Notice struct{ Mailer string }\n",
			want: []string{"jobs.go:7:6: listener Notice has fields; its job carries only the event, so put what its handler needs on the value you pass to Register"},
		},
		{
			name: "unique listener",
			src:  "//job:event\ntype Shipped struct{ ID string }\n\n//job:listen=Shipped unique_for=1h\ntype Notice struct{}\n",
			want: []string{"jobs.go:7:6: listener Notice may not set unique_for: an event's listener jobs are pushed in one atomic call, and a unique lock would be a second"},
		},
		{
			name: "sync listener with queue keys",
			src:  "//job:event\ntype Shipped struct{ ID string }\n\n//job:listen=Shipped sync tries=3\ntype Notice struct{}\n",
			want: []string{"jobs.go:7:6: listener Notice is sync: it runs inside Fire, not as a queued job, so tries does not apply; drop it, or drop sync"},
		},
		{
			name: "sync alone",
			src:  "//job:sync\ntype Notice struct{}\n",
			want: []string{"jobs.go:4:6: Notice is sync but listens to nothing; add listen=Event"},
		},
		{
			name: "listeners of one event on two queues",
			src:  "//job:event\ntype Shipped struct{ ID string }\n\n//job:listen=Shipped queue=mail\ntype A struct{}\n\n//job:listen=Shipped queue=sms\ntype B struct{}\n",
			want: []string{"jobs.go:10:6: listener B of Shipped goes to queue sms, but A to queue mail (jobs.go:7); the queued listeners of one event are pushed in one atomic call, so they must share queue, connection and delay"},
		},
		{
			name: "listener and job with one wire name",
			src:  "//job:event\ntype Shipped struct{ ID string }\n\n//job:name=mail.x\ntype Send struct{ ID string }\n\n//job:listen=Shipped name=mail.x\ntype Notice struct{}\n",
			want: []string{`jobs.go:10:6: job name "mail.x" of Notice is also the name of Send (jobs.go:7); set a distinct name= on one of them`},
		},
		{
			name: "event field named like Fire",
			src:  "//job:event\ntype Shipped struct{ Fire bool }\n",
			want: []string{"jobs.go:4:22: field Shipped.Fire clashes with the method Fire that jobgen generates on every event; rename the field"},
		},
		{
			name: "listener method named like a generated one",
			src:  "//job:event\ntype Shipped struct{ ID string }\n\n//job:listen=Shipped\ntype Notice struct{}\n\nfunc (Notice) ListenerName() string { return \"\" }\n",
			want: []string{"jobs.go:9:15: method Notice.ListenerName clashes with the method of that name that jobgen generates on every listener; rename it"},
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

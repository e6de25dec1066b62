package console

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jobgen/jobgen/runtime"
)

// Every option of runtime.WorkerConfig has its flag.
func TestWorkerFlags(t *testing.T) {
	t.Parallel()
	logger := slog.Default()
	tests := []struct {
		name string
		base runtime.WorkerConfig
		args []string
		want runtime.WorkerConfig
	}{
		{name: "none", args: nil, want: runtime.WorkerConfig{}},
		{
			name: "all",
			args: []string{
				"--queue", "high,default,low", "--concurrency", "4", "--sleep", "3", "--rest", "250ms",
				"--tries", "5", "--backoff", "1s,5s,30s", "--timeout", "45s", "--retry-after", "2m",
				"--max-jobs", "100", "--max-time", "1h", "--memory", "256", "--once", "--stop-when-empty",
				"--name", "mailer", "--grace", "10s",
			},
			want: runtime.WorkerConfig{
				Queues: []string{"high", "default", "low"}, Concurrency: 4, Sleep: 3 * time.Second, Rest: 250 * time.Millisecond,
				Tries: 5, Backoff: []time.Duration{time.Second, 5 * time.Second, 30 * time.Second}, Timeout: 45 * time.Second,
				RetryAfter: 2 * time.Minute, MaxJobs: 100, MaxTime: time.Hour, Memory: 256, Once: true, StopWhenEmpty: true,
				Name: "mailer", Grace: 10 * time.Second,
			},
		},
		{
			name: "exponential backoff, seconds",
			args: []string{"--backoff", "exp:0.5,300"},
			want: runtime.WorkerConfig{ExponentialBackoff: &runtime.ExponentialBackoff{Base: 500 * time.Millisecond, Max: 5 * time.Minute}},
		},
		{
			name: "backoff in bare seconds; the last --backoff wins",
			args: []string{"--backoff", "exp:1s,1m", "--backoff", "1,10"},
			want: runtime.WorkerConfig{Backoff: []time.Duration{time.Second, 10 * time.Second}},
		},
		{
			name: "--queue repeated, replacing the application's",
			base: runtime.WorkerConfig{Queues: []string{"x"}, Logger: logger, Concurrency: 20},
			args: []string{"--queue", "a", "--queue=b,c"},
			want: runtime.WorkerConfig{Queues: []string{"a", "b", "c"}, Logger: logger, Concurrency: 20},
		},
		{
			name: "the application's defaults stay unless overridden",
			base: runtime.WorkerConfig{Queues: []string{"x"}, Tries: 3, Sleep: time.Second},
			args: []string{"--tries", "1"},
			want: runtime.WorkerConfig{Queues: []string{"x"}, Tries: 1, Sleep: time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFlags(&Command{Worker: tt.base}, workVerb)
			cfg, quiet := workerFlags(&Command{Worker: tt.base}, fs)
			fs.common()
			rest, err := fs.parse(tt.args)
			require.NoError(t, err)
			require.Empty(t, rest)
			require.False(t, *quiet)
			require.Equal(t, tt.want, *cfg)
		})
	}
}

func TestParseDuration(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{
		"90": 90 * time.Second, "0.25": 250 * time.Millisecond, "90s": 90 * time.Second, "1m30s": 90 * time.Second, "0": 0,
	} {
		got, err := parseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "inf", "NaN", "soon", "1e3"} {
		_, err := parseDuration(in)
		require.Error(t, err, in)
	}
}

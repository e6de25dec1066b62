package bench

import (
	"context"
	"time"

	"github.com/jobgen/jobgen/internal/cputime"
)

// cpuMeter reads the CPU time Redis and this process use over a phase.
// Both serve every system in turn, one at a time, so the difference over
// a phase is what that phase cost them.
type cpuMeter struct {
	redis, self time.Duration
	err         error
}

func (r *runner) cpuStart(ctx context.Context) cpuMeter {
	var m cpuMeter
	m.redis, m.err = r.t.CPU(ctx)
	if m.err == nil {
		m.self, m.err = cputime.Process()
	}
	return m
}

// record fills in rec's CPU per job, in µs, for the phase since m.
func (m cpuMeter) record(ctx context.Context, r *runner, rec *Record) {
	if m.err != nil || rec.Jobs == 0 {
		return
	}
	redisCPU, err := r.t.CPU(ctx)
	if err != nil {
		return
	}
	self, err := cputime.Process()
	if err != nil {
		return
	}
	n := float64(rec.Jobs)
	rec.RedisCPUPerJob = float64((redisCPU - m.redis).Microseconds()) / n
	rec.ClientCPUPerJob = float64((self - m.self).Microseconds()) / n
}

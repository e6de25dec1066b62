package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jobgen/jobgen/faults/internal/faultworker"
)

// Fleet runs worker subprocesses in numbered slots: the test binary
// re-executed in child mode (see faultworker). A slot's worker can be
// signalled, killed and replaced; with Supervise, a worker that exits is
// replaced at once, as a process supervisor would.
type Fleet struct {
	t    testing.TB
	dir  string
	base faultworker.Config

	mu        sync.Mutex
	procs     map[int]*Proc
	gens      map[int]int
	supervise bool
	closed    bool
	exits     []Exit
	wg        sync.WaitGroup
}

var errClosed = errors.New("fleet closed")

// Proc is one worker process.
type Proc struct {
	Slot, Gen int
	Name      string
	Ledger    string
	Log       string
	Stderr    string
	Started   time.Time

	cmd      *exec.Cmd
	done     chan struct{}
	expected bool // the test signalled it to end
	state    *os.ProcessState
}

// Exit is how a worker process ended.
type Exit struct {
	Slot, Gen int
	Status    string
	// Expected is true if the test killed or stopped it.
	Expected bool
	At       time.Time
}

// NewFleet returns an empty fleet whose workers run with base (URL,
// Prefix, Queues and worker settings); Name, Ledger and Log are set per
// worker. Every worker is killed when the test ends.
func NewFleet(t testing.TB, base faultworker.Config) *Fleet {
	f := &Fleet{t: t, dir: t.TempDir(), base: base, procs: map[int]*Proc{}, gens: map[int]int{}}
	t.Cleanup(f.close)
	return f
}

// Dir is where the fleet's ledgers and logs are.
func (f *Fleet) Dir() string { return f.dir }

// Supervise turns on replacing workers that exit.
func (f *Fleet) Supervise() {
	f.mu.Lock()
	f.supervise = true
	f.mu.Unlock()
}

// Start starts workers in slots 0..n-1 and waits until each is ready.
func (f *Fleet) Start(n int) {
	f.t.Helper()
	for i := range n {
		f.Replace(i)
	}
}

// Replace starts a new worker in slot, and waits until it is ready. A
// worker still running in slot is left alone; replace it after it exits.
func (f *Fleet) Replace(slot int) *Proc {
	f.t.Helper()
	p, err := f.launch(slot)
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *Fleet) launch(slot int) (*Proc, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil, errClosed
	}
	gen := f.gens[slot]
	f.gens[slot] = gen + 1
	f.mu.Unlock()

	stem := filepath.Join(f.dir, fmt.Sprintf("w%02d.g%03d", slot, gen))
	cfg := f.base
	cfg.Name = fmt.Sprintf("w%d.%d", slot, gen)
	cfg.Ledger, cfg.Log = stem+".ledger", stem+".log"
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	stderr, err := os.Create(stem + ".stderr")
	if err != nil {
		return nil, err
	}
	cmd := ChildCommand(faultworker.ConfigEnv + "=" + string(js))
	cmd.Stdout, cmd.Stderr = stderr, stderr
	p := &Proc{Slot: slot, Gen: gen, Name: cfg.Name, Ledger: cfg.Ledger, Log: cfg.Log, Stderr: stem + ".stderr",
		cmd: cmd, done: make(chan struct{}), Started: time.Now()}
	if err := cmd.Start(); err != nil {
		stderr.Close()
		return nil, fmt.Errorf("start worker: %w", err)
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		stderr.Close()
		return nil, errClosed
	}
	f.procs[slot] = p
	f.wg.Add(1)
	f.mu.Unlock()
	go func() {
		defer f.wg.Done()
		_ = cmd.Wait()
		stderr.Close()
		p.state = cmd.ProcessState
		close(p.done)
		f.exited(p)
	}()
	if err := p.waitReady(60 * time.Second); err != nil {
		return nil, err
	}
	return p, nil
}

func (f *Fleet) exited(p *Proc) {
	f.mu.Lock()
	f.exits = append(f.exits, Exit{Slot: p.Slot, Gen: p.Gen, Status: p.state.String(), Expected: p.expected, At: time.Now()})
	restart := f.supervise && !f.closed && f.procs[p.Slot] == p
	f.mu.Unlock()
	if restart {
		if _, err := f.launch(p.Slot); err != nil && !errors.Is(err, errClosed) {
			f.t.Errorf("supervisor: restart slot %d: %v", p.Slot, err)
		}
	}
}

// waitReady waits for the worker's R line.
func (p *Proc) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		recs, _ := faultworker.ReadLedger(p.Ledger)
		for _, r := range recs {
			if r.Kind == 'R' {
				return nil
			}
		}
		select {
		case <-p.done:
			b, _ := os.ReadFile(p.Stderr)
			return fmt.Errorf("worker %s exited before it was ready (%v):\n%s", p.Name, p.state, b)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("worker %s not ready after %v", p.Name, timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Proc returns the current worker of slot.
func (f *Fleet) Proc(slot int) *Proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.procs[slot]
}

// PID is the worker's process ID.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Signal sends sig to the worker. SIGKILL, SIGTERM and SIGINT mark its
// exit as expected.
func (f *Fleet) Signal(slot int, sig syscall.Signal) *Proc {
	f.t.Helper()
	f.mu.Lock()
	p := f.procs[slot]
	if sig == syscall.SIGKILL || sig == syscall.SIGTERM || sig == syscall.SIGINT {
		p.expected = true
	}
	f.mu.Unlock()
	if err := p.cmd.Process.Signal(sig); err != nil {
		f.t.Errorf("signal %v to worker %s: %v", sig, p.Name, err)
	}
	return p
}

// Kill kills slot's worker with SIGKILL and waits until it is dead.
func (f *Fleet) Kill(slot int) *Proc {
	f.t.Helper()
	p := f.Signal(slot, syscall.SIGKILL)
	p.Wait(10 * time.Second)
	return p
}

// Wait waits for the worker to exit, and reports whether it did in time.
func (p *Proc) Wait(timeout time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Exited reports whether the worker has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// State is the worker's exit state, once it has exited.
func (p *Proc) State() *os.ProcessState { <-p.done; return p.state }

// StopAll stops supervision, sends SIGTERM to every worker and waits for
// them to exit within timeout; any still running then is killed, and
// reported as an error.
func (f *Fleet) StopAll(timeout time.Duration) {
	f.t.Helper()
	f.mu.Lock()
	f.supervise = false
	procs := make([]*Proc, 0, len(f.procs))
	for _, p := range f.procs {
		if !p.Exited() {
			p.expected = true
			procs = append(procs, p)
		}
	}
	f.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range procs {
		if !p.Wait(timeout) {
			f.t.Errorf("worker %s did not stop within %v of SIGTERM", p.Name, timeout)
			_ = p.cmd.Process.Kill()
			p.Wait(5 * time.Second)
		}
	}
}

// Exits lists the workers that have exited so far.
func (f *Fleet) Exits() []Exit {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Exit(nil), f.exits...)
}

// Deaths lists the exits the test did not cause.
func (f *Fleet) Deaths() []Exit {
	var out []Exit
	for _, e := range f.Exits() {
		if !e.Expected {
			out = append(out, e)
		}
	}
	return out
}

// Records reads every worker's ledger.
func (f *Fleet) Records() []faultworker.Record {
	f.t.Helper()
	recs, err := faultworker.ReadLedgers(f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	return recs
}

// LogLines returns the lines of every worker's log that contain all of
// subs, such as `"level":"ERROR"`.
func (f *Fleet) LogLines(subs ...string) []string {
	files, _ := filepath.Glob(filepath.Join(f.dir, "*.log"))
	var out []string
	for _, path := range files {
		b, _ := os.ReadFile(path)
	line:
		for _, l := range strings.Split(string(b), "\n") {
			for _, s := range subs {
				if !strings.Contains(l, s) {
					continue line
				}
			}
			if l != "" {
				out = append(out, filepath.Base(path)+": "+l)
			}
		}
	}
	return out
}

// Stderr returns every worker's stderr, for failure messages; races found
// by the race detector show up here.
func (f *Fleet) Stderr() string {
	files, _ := filepath.Glob(filepath.Join(f.dir, "*.stderr"))
	var sb strings.Builder
	for _, path := range files {
		b, _ := os.ReadFile(path)
		if len(b) > 0 {
			fmt.Fprintf(&sb, "== %s\n%s\n", filepath.Base(path), b)
		}
	}
	return sb.String()
}

func (f *Fleet) close() {
	f.mu.Lock()
	f.closed = true
	for _, p := range f.procs {
		if !p.Exited() {
			p.expected = true
			_ = p.cmd.Process.Kill()
		}
	}
	f.mu.Unlock()
	f.wg.Wait()
	if s := f.Stderr(); strings.Contains(s, "DATA RACE") {
		f.t.Errorf("a worker reported a data race:\n%s", s)
	}
}

// ChildCommand is the test binary run again as a child process (a worker,
// a relay), which reads its configuration from env (KEY=VALUE) and runs
// no test.
func ChildCommand(env string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// Under -race a process sleeps 1s at exit by default, which would
	// slow every stop; races are still reported, with exit status 66.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), env, "GORACE="+gorace)
	return cmd
}

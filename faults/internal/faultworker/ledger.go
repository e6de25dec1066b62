package faultworker

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Ledger is a worker's append-only record of its handler runs. Each line
// goes out in one write(2) on a file opened with O_APPEND, so lines from
// concurrent handlers never interleave and a line written before a
// SIGKILL is kept.
//
// Lines are space-separated fields, the first one the record's kind:
//
//	R pid unixms                          the worker is ready
//	S id seq attempt pid unixms           a handler run starts
//	F id seq attempt pid unixms           a handler run finishes with success
//	B id pid unixns                       a traced run begins (Task.Trace)
//	E id pid unixns                       a traced run returns
//	W id seq pid unixms detail...         a workflow step was handed
//	                                      results other than its parents'
//	C label id pid unixms                 a chain or batch callback runs:
//	                                      label is its argument (Callback),
//	                                      id the job whose end made it run
//	M pid unixms heapbytes goroutines     a stats sample
//	X pid unixms reason                   the worker returned from Run
type Ledger struct {
	f   *os.File
	pid int
}

// OpenLedger opens (creating) the ledger at path for appending.
func OpenLedger(path string) (*Ledger, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	return &Ledger{f: f, pid: os.Getpid()}, nil
}

func (l *Ledger) write(s string) {
	if _, err := l.f.WriteString(s); err != nil {
		// A ledger that cannot be written makes every figure wrong.
		fmt.Fprintln(os.Stderr, "faultworker: ledger write:", err)
		os.Exit(4)
	}
}

func now() int64 { return time.Now().UnixMilli() }

// Ready records that the worker is about to run.
func (l *Ledger) Ready() { l.write(fmt.Sprintf("R %d %d\n", l.pid, now())) }

// Start records the start of a handler run.
func (l *Ledger) Start(id string, seq, attempt int) {
	l.write(fmt.Sprintf("S %s %d %d %d %d\n", id, seq, attempt, l.pid, now()))
}

// Finish records a handler run that succeeded.
func (l *Ledger) Finish(id string, seq, attempt int) {
	l.write(fmt.Sprintf("F %s %d %d %d %d\n", id, seq, attempt, l.pid, now()))
}

// Mismatch records a workflow step run handed results other than its
// parents', with what differed.
func (l *Ledger) Mismatch(id string, seq int, detail string) {
	l.write(fmt.Sprintf("W %s %d %d %d %s\n", id, seq, l.pid, now(), strings.Join(strings.Fields(detail), " ")))
}

// Begin records that a traced run begins, to the nanosecond.
func (l *Ledger) Begin(id string) {
	l.write(fmt.Sprintf("B %s %d %d\n", id, l.pid, time.Now().UnixNano()))
}

// End records that a traced run returns, to the nanosecond.
func (l *Ledger) End(id string) {
	l.write(fmt.Sprintf("E %s %d %d\n", id, l.pid, time.Now().UnixNano()))
}

// Callback records a run of the suite's callback, given label, for the
// end of job id.
func (l *Ledger) Callback(label, id string) {
	l.write(fmt.Sprintf("C %s %s %d %d\n", strings.ReplaceAll(label, " ", "_"), id, l.pid, now()))
}

// Stats records a heap and goroutine sample.
func (l *Ledger) Stats(heap uint64, goroutines int) {
	l.write(fmt.Sprintf("M %d %d %d %d\n", l.pid, now(), heap, goroutines))
}

// Exit records that the worker returned from Run.
func (l *Ledger) Exit(reason string) {
	l.write(fmt.Sprintf("X %d %d %s\n", l.pid, now(), strings.ReplaceAll(reason, " ", "_")))
}

// Record is one ledger line.
type Record struct {
	Kind    byte   // R, S, F, W, B, E, C, M or X
	File    string // base name of the ledger it came from
	ID      string
	Seq     int
	Attempt int
	PID     int
	At      time.Time
	// Heap and Goroutines are set on M lines.
	Heap       uint64
	Goroutines int
	// Reason is set on X lines.
	Reason string
	// Label is set on C lines, with ID; on W lines, what differed.
	Label string
}

// ReadLedgers reads every *.ledger file in dir. A last line cut short by
// a kill is skipped.
func ReadLedgers(dir string) ([]Record, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.ledger"))
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, path := range files {
		recs, err := ReadLedger(path)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
	}
	return out, nil
}

// ReadLedger reads one ledger file.
func ReadLedger(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	base := filepath.Base(path)
	var out []Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		r, ok := parse(sc.Text())
		if !ok {
			continue
		}
		r.File = base
		out = append(out, r)
	}
	return out, sc.Err()
}

func parse(line string) (Record, bool) {
	f := strings.Fields(line)
	if len(f) == 0 || len(f[0]) != 1 {
		return Record{}, false
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	ms := func(s string) time.Time { n, _ := strconv.ParseInt(s, 10, 64); return time.UnixMilli(n) }
	r := Record{Kind: f[0][0]}
	switch {
	case (r.Kind == 'S' || r.Kind == 'F') && len(f) == 6:
		r.ID, r.Seq, r.Attempt, r.PID, r.At = f[1], atoi(f[2]), atoi(f[3]), atoi(f[4]), ms(f[5])
	case r.Kind == 'W' && len(f) >= 5:
		r.ID, r.Seq, r.PID, r.At, r.Label = f[1], atoi(f[2]), atoi(f[3]), ms(f[4]), strings.Join(f[5:], " ")
	case (r.Kind == 'B' || r.Kind == 'E') && len(f) == 4:
		ns, _ := strconv.ParseInt(f[3], 10, 64)
		r.ID, r.PID, r.At = f[1], atoi(f[2]), time.Unix(0, ns)
	case r.Kind == 'C' && len(f) == 5:
		r.Label, r.ID, r.PID, r.At = f[1], f[2], atoi(f[3]), ms(f[4])
	case r.Kind == 'R' && len(f) == 3:
		r.PID, r.At = atoi(f[1]), ms(f[2])
	case r.Kind == 'M' && len(f) == 5:
		h, _ := strconv.ParseUint(f[3], 10, 64)
		r.PID, r.At, r.Heap, r.Goroutines = atoi(f[1]), ms(f[2]), h, atoi(f[4])
	case r.Kind == 'X' && len(f) == 4:
		r.PID, r.At, r.Reason = atoi(f[1]), ms(f[2]), f[3]
	default:
		return Record{}, false
	}
	return r, true
}

package console

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobgen/jobgen/internal/qname"
	"github.com/jobgen/jobgen/runtime"
)

// verb is one command.
type verb struct {
	name        string
	args        string // synopsis of the positional arguments
	summary     string // one line, for the list
	about       string // a paragraph, for --help
	maxArgs     int    // most positional arguments; -1 for any number
	needsRouter bool
	// needsSchedule: the command runs the application's schedule
	// (Command.Schedule).
	needsSchedule bool
	// noRedis: the command needs no Redis; its session has no engine.
	noRedis bool
	// redisOptional: the command runs even when Redis cannot be opened,
	// with no engine in its session and the error in session.redisErr.
	redisOptional bool
	// setup declares the command's flags and returns what runs it once
	// they are parsed.
	setup func(c *Command, fs *flags) func(ctx context.Context, s *session) error
}

// verbs are the commands, in the order help lists them.
var verbs = []*verb{
	workVerb,
	failedVerb, retryVerb, forgetVerb, flushVerb, pruneVerb, jobVerb, cancelVerb,
	workflowVerb, workflowCancelVerb, workflowRetryVerb,
	pushVerb, clearVerb, restartVerb, pauseVerb, resumeVerb, limitVerb,
	sizeVerb, monitorVerb, monitorTagVerb, metricsVerb,
	scheduleWorkVerb, scheduleRunVerb, scheduleListVerb, scheduleTestVerb,
	schedulePauseVerb, scheduleResumeVerb,
	dashboardVerb,
	outboxMigrateVerb, relayVerb, failedMigrateVerb,
	laravelDoctorVerb,
}

func lookup(name string) *verb {
	for _, v := range verbs {
		if v.name == name {
			return v
		}
	}
	return nil
}

// errHelp is returned by parse for --help.
var errHelp = errors.New("help requested")

// flags is a command's flag set: the standard library's flag package,
// which takes --name and -name alike, with flags allowed between
// positional arguments, and help that lists flags in declaration order.
type flags struct {
	*flag.FlagSet
	c     *Command
	verb  *verb
	order []string
	// dflt is the default to show for a flag whose own default is zero,
	// because the runtime fills it in.
	dflt map[string]string
	// meta names a flag's value in help, where its type would not do.
	meta map[string]string

	redis         string
	prefix        string
	partitions    map[string]int
	allowEviction bool
}

func newFlags(c *Command, v *verb) *flags {
	fs := &flags{FlagSet: flag.NewFlagSet(v.name, flag.ContinueOnError), c: c, verb: v, dflt: map[string]string{}, meta: map[string]string{}}
	fs.SetOutput(io.Discard)
	return fs
}

// add records a flag declared on the set, for help.
func (fs *flags) add(name, runtimeDefault string) {
	fs.order = append(fs.order, name)
	if runtimeDefault != "" {
		fs.dflt[name] = runtimeDefault
	}
}

func (fs *flags) intVar(p *int, name string, value int, usage, runtimeDefault string) {
	fs.IntVar(p, name, value, usage)
	fs.add(name, runtimeDefault)
}

func (fs *flags) boolVar(p *bool, name string, value bool, usage string) {
	fs.BoolVar(p, name, value, usage)
	fs.add(name, "")
}

func (fs *flags) stringVar(p *string, name, value, usage, runtimeDefault string) {
	fs.StringVar(p, name, value, usage)
	fs.add(name, runtimeDefault)
}

func (fs *flags) durationVar(p *time.Duration, name, usage, runtimeDefault string) {
	fs.Var(durationValue{p}, name, usage)
	fs.add(name, runtimeDefault)
}

func (fs *flags) queuesVar(p *[]string, usage, runtimeDefault string) {
	fs.Var(&listValue{p: p, check: validQueue}, "queue", usage)
	fs.add("queue", runtimeDefault)
	fs.meta["queue"] = "NAME[,NAME]"
}

// common declares the flags every command takes, after its own.
func (fs *flags) common() {
	fs.stringVar(&fs.redis, "redis", "", "Redis URL: redis://, rediss://, redis+sentinel://, redis+cluster://",
		"$"+runtime.URLEnv+", then $"+fallbackURLEnv)
	fs.meta["redis"] = "URL"
	fs.stringVar(&fs.prefix, "prefix", "", "key prefix of the application's queues", strconv.Quote(fs.c.prefix()))
	fs.meta["prefix"] = "PREFIX"
	fs.Var(partitionsValue{&fs.partitions}, "partitions", "partitioned queues and their partition counts, as the application's EngineConfig.Partitions")
	fs.add("partitions", "")
	fs.meta["partitions"] = "NAME=N[,NAME=N]"
	fs.boolVar(&fs.allowEviction, "allow-eviction", false, "run on a Redis whose maxmemory-policy may evict keys, and lose jobs under memory pressure (EngineConfig.AllowEviction)")
}

// parse parses args, taking flags before, between and after positional
// arguments ("--" ends the flags), and returns the positional arguments.
func (fs *flags) parse(args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			// A negative number where a flag could start ("queue:limit q
			// -1") is an argument, for the command to judge, not a flag
			// named 1.
			left := fs.Args()
			if consumed := len(args) - len(left); consumed > 0 && isNegativeNumber(args[consumed-1]) {
				rest = append(rest, args[consumed-1])
				args = left
				continue
			}
			return nil, errors.New(strings.Replace(err.Error(), " -", " --", 1))
		}
		left := fs.Args()
		if len(left) == 0 {
			return rest, nil
		}
		if consumed := len(args) - len(left); consumed > 0 && args[consumed-1] == "--" {
			return append(rest, left...), nil
		}
		rest = append(rest, left[0])
		args = left[1:]
	}
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flags, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// isNegativeNumber reports whether s is a minus sign and a plain number,
// such as -1 or -0.5.
func isNegativeNumber(s string) bool {
	n, ok := strings.CutPrefix(s, "-")
	return ok && isSeconds(n)
}

// writeHelp writes the command's usage, description and flags.
func (fs *flags) writeHelp(w io.Writer) {
	v := fs.verb
	synopsis := fs.c.name() + " " + v.name
	if v.args != "" {
		synopsis += " " + v.args
	}
	fmt.Fprintf(w, "Usage: %s [flags]\n\n%s\n\nFlags:\n", synopsis, v.about)
	tw := table(w)
	for _, name := range fs.order {
		f := fs.Lookup(name)
		usage := f.Usage
		placeholder := fs.meta[name]
		if placeholder == "" {
			switch f.Value.(type) {
			case interface{ IsBoolFlag() bool }:
			case durationValue:
				placeholder = "DURATION"
			default:
				placeholder = "N"
				if g, ok := f.Value.(flag.Getter); ok {
					if _, isString := g.Get().(string); isString {
						placeholder = "TEXT"
					}
				}
			}
		}
		switch {
		case !isZero(f.DefValue):
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		case fs.dflt[name] != "":
			usage += fmt.Sprintf(" (default %s)", fs.dflt[name])
		}
		fmt.Fprintf(tw, "  --%s %s\t%s\n", name, placeholder, usage)
	}
	tw.Flush()
}

func isZero(def string) bool {
	switch def {
	case "", "0", "0s", "false", "[]":
		return true
	}
	return false
}

// parseDuration takes a Go duration ("90s", "1m30s") or, as Laravel's
// options do, a number of seconds ("90").
func parseDuration(s string) (time.Duration, error) {
	if isSeconds(s) {
		f, err := strconv.ParseFloat(s, 64)
		if err == nil {
			return time.Duration(f * float64(time.Second)), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither a duration (90s, 1m30s) nor a number of seconds", s)
	}
	return d, nil
}

// isSeconds reports whether s is a plain number, such as 90 or 0.5.
func isSeconds(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.") == ""
}

// durationValue is a flag.Value for parseDuration.
type durationValue struct{ p *time.Duration }

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}

func (v durationValue) String() string {
	if v.p == nil {
		return "0s"
	}
	return v.p.String()
}

// listValue is a comma-separated list flag that may also be repeated; the
// first use replaces the default. check, if set, vets each item.
type listValue struct {
	p     *[]string
	set   bool
	check func(string) error
}

func (v *listValue) Set(s string) error {
	if !v.set {
		*v.p, v.set = nil, true
	}
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		if v.check != nil {
			if err := v.check(item); err != nil {
				return err
			}
		}
		*v.p = append(*v.p, item)
	}
	return nil
}

// validQueue checks a queue name given in a flag by the rules
// runtime.ValidateQueueName applies (internal/qname). It returns qname's
// error, which names the queue and what is wrong with it without
// runtime.ErrInvalid's prefix: the flag package already says the value is
// invalid.
func validQueue(name string) error {
	return qname.Validate(name)
}

func (v *listValue) String() string {
	if v.p == nil {
		return ""
	}
	return strings.Join(*v.p, ",")
}

// backoffValue sets a worker's backoff from "1s,5s,30s" (the last delay
// repeats) or "exp:BASE,MAX" (Base * 2^(n-1), at most Max). Bare numbers
// are seconds.
type backoffValue struct {
	list *[]time.Duration
	exp  **runtime.ExponentialBackoff
}

func (v backoffValue) Set(s string) error {
	if spec, ok := strings.CutPrefix(s, "exp:"); ok {
		parts := strings.Split(spec, ",")
		if len(parts) != 2 {
			return fmt.Errorf("exponential backoff %q: want exp:BASE,MAX, such as exp:1s,5m", s)
		}
		base, err := parseDuration(parts[0])
		if err != nil {
			return err
		}
		maxDelay, err := parseDuration(parts[1])
		if err != nil {
			return err
		}
		*v.exp, *v.list = &runtime.ExponentialBackoff{Base: base, Max: maxDelay}, nil
		return nil
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		if isSeconds(p) {
			parts[i] = p + "s"
		}
	}
	list, err := runtime.ParseBackoff(strings.Join(parts, ","))
	if err != nil {
		return errors.New(oneLine(err))
	}
	*v.list, *v.exp = list, nil
	return nil
}

func (v backoffValue) String() string {
	switch {
	case v.exp != nil && *v.exp != nil:
		return fmt.Sprintf("exp:%v,%v", (*v.exp).Base, (*v.exp).Max)
	case v.list != nil && len(*v.list) > 0:
		s := make([]string, len(*v.list))
		for i, d := range *v.list {
			s[i] = d.String()
		}
		return strings.Join(s, ",")
	}
	return ""
}

// partitionsValue reads partition counts, "emails=3,reports=2".
type partitionsValue struct{ p *map[string]int }

func (v partitionsValue) Set(s string) error {
	if *v.p == nil {
		*v.p = map[string]int{}
	}
	for _, item := range strings.Split(s, ",") {
		name, count, ok := strings.Cut(strings.TrimSpace(item), "=")
		n, err := strconv.Atoi(count)
		if !ok || name == "" || err != nil {
			return fmt.Errorf("%q: want NAME=N, such as emails=3", item)
		}
		if err := validQueue(name); err != nil {
			return err
		}
		(*v.p)[name] = n
	}
	return nil
}

func (v partitionsValue) String() string {
	if v.p == nil || len(*v.p) == 0 {
		return ""
	}
	var parts []string
	for name, n := range *v.p {
		parts = append(parts, fmt.Sprintf("%s=%d", name, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

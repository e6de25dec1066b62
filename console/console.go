package console

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/jobgen/jobgen/runtime"
	"github.com/jobgen/jobgen/schedule"
)

// fallbackURLEnv is the environment variable the commands read the Redis
// URL from when neither --redis nor runtime.URLEnv (JOBGEN_REDIS_URL) is set.
// JOBGEN_REDIS_URL comes first because it is the one the application
// dispatches with; REDIS_URL is often set by a platform for another
// Redis (a cache), and a worker on it would never see the jobs.
const fallbackURLEnv = "REDIS_URL"

// Command is one run of the queue commands, with the streams and
// environment they use. The zero value offers every command but
// queue:work; set Router to offer queue:work too.
type Command struct {
	// Name is the program name shown in usage and errors. Default: the
	// base name of os.Args[0].
	Name string
	// Router routes jobs to the application's handlers. queue:work needs
	// it; without it, queue:work explains where it runs and fails.
	Router *runtime.Router
	// Schedule is the application's periodic jobs, which the schedule:
	// commands and queue:work --schedule run; without it, they explain
	// where they run and fail.
	Schedule *schedule.Schedule
	// Engine is the engine configuration the commands start from;
	// --prefix overrides its Prefix. Set Keys here for a worker of
	// encrypted jobs.
	Engine runtime.EngineConfig
	// Worker is the worker configuration queue:work starts from; the
	// flags given override its fields. Set Worker.Logger here to send
	// the worker's logs elsewhere than queue:work's log on Stdout.
	Worker runtime.WorkerConfig
	// Stdout receives results; nil means os.Stdout.
	Stdout io.Writer
	// Stderr receives errors, progress and logs; nil means os.Stderr.
	Stderr io.Writer
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Outbox is the application's PostgreSQL outbox, for outbox:migrate,
	// queue:relay and queue:work --relay (WithOutbox).
	Outbox *Outbox
}

// Main runs the command named by the process's arguments with router's
// handlers and exits with its status. It is the whole main of a worker
// binary:
//
//	func main() {
//		r := runtime.NewRouter()
//		jobs.Register(r, handlers)
//		console.Main(r)
//	}
//
// opts give the configurations the application opens its own engine
// with, such as the key ring of its encrypted jobs:
//
//	console.Main(r, console.WithEngine(runtime.EngineConfig{Keys: ring}))
func Main(router *runtime.Router, opts ...Option) {
	os.Exit(Run(context.Background(), os.Args[1:], router, opts...))
}

// Run runs the command named by args (without the program name) with
// router's handlers and opts, on the process's streams and environment,
// and returns the exit status: 0 on success, 1 when the command failed or
// a monitored threshold was crossed, 2 for bad usage.
func Run(ctx context.Context, args []string, router *runtime.Router, opts ...Option) int {
	c := &Command{Router: router}
	for _, o := range opts {
		o(c)
	}
	return c.Run(ctx, args)
}

// Option sets a field of the Command that Main and Run build.
type Option func(*Command)

// WithEngine sets Command.Engine, the engine configuration every command
// starts from: give it the EngineConfig the application dispatches with,
// so that the worker opens its encrypted jobs (Keys) and the commands use
// its Prefix and Partitions. The --prefix and --partitions flags override
// those.
func WithEngine(cfg runtime.EngineConfig) Option {
	return func(c *Command) { c.Engine = cfg }
}

// WithWorker sets Command.Worker, the worker configuration queue:work
// starts from: the application's own defaults, its Middleware and
// Logger. The flags given override its fields.
func WithWorker(cfg runtime.WorkerConfig) Option {
	return func(c *Command) { c.Worker = cfg }
}

// Handles reports whether args (without the program name) name one of
// the commands, so that a program with commands of its own can hand
// only these to Run.
func Handles(args []string) bool {
	return len(args) > 0 && (lookup(args[0]) != nil || args[0] == "help" || args[0] == "list")
}

// Run runs the command named by args (without the program name) and
// returns the exit status, as the package-level Run does. An error is
// reported as one line on Stderr. Before it connects, Run sends
// go-redis's own log lines (redis.SetLogger, one logger per process) to
// Worker.Logger at Debug level, or drops them if there is none, so that
// Redis being down is that one line.
func (c *Command) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		c.writeOverview(c.stderr())
		return 2
	}
	switch args[0] {
	case "help", "list", "-h", "-help", "--help":
		if len(args) > 1 && lookup(args[1]) != nil {
			return c.Run(ctx, []string{args[1], "--help"})
		}
		c.writeOverview(c.stdout())
		return 0
	}
	v := lookup(args[0])
	if v == nil {
		fmt.Fprintf(c.stderr(), "%s: unknown command %q (run %s help for the list)\n", c.name(), args[0], c.name())
		return 2
	}
	fs := newFlags(c, v)
	run := v.setup(c, fs)
	fs.common()
	rest, err := fs.parse(args[1:])
	switch {
	case errors.Is(err, errHelp):
		fs.writeHelp(c.stdout())
		return 0
	case err != nil:
		fmt.Fprintf(c.stderr(), "%s %s: %s (see %s %s --help)\n", c.name(), v.name, oneLine(err), c.name(), v.name)
		return 2
	}
	if v.maxArgs >= 0 && len(rest) > v.maxArgs {
		fmt.Fprintf(c.stderr(), "%s %s: unexpected argument %q (see %s %s --help)\n", c.name(), v.name, rest[v.maxArgs], c.name(), v.name)
		return 2
	}
	routeRedisLog(c.logger())
	if v.needsRouter && c.Router == nil {
		c.fail(v, errors.New("needs the application's job handlers, so it runs from the application's own binary: "+
			"call console.Main(router) in its main (see go doc github.com/jobgen/jobgen/console)"))
		return 1
	}
	if v.needsSchedule && c.Schedule == nil {
		c.fail(v, errNoSchedule)
		return 1
	}
	s := &session{c: c, verb: v, args: rest, out: c.stdout(), errOut: c.stderr()}
	if !v.noRedis {
		var err error
		switch s, err = c.open(ctx, v, fs, rest); {
		case err == nil:
			defer s.engine.Close()
		case v.redisOptional:
			// The command runs without an engine, and reports err itself.
			s = &session{c: c, verb: v, args: rest, out: c.stdout(), errOut: c.stderr(), redisErr: err}
		default:
			c.fail(v, err)
			return 1
		}
	}
	if err := run(ctx, s); err != nil {
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintf(c.stderr(), "%s %s: %s (see %s %s --help)\n", c.name(), v.name, oneLine(err), c.name(), v.name)
			return 2
		}
		c.fail(v, err)
		return 1
	}
	return 0
}

// usageError is a mistake in a command's arguments found after parsing.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// fail reports err as one line.
func (c *Command) fail(v *verb, err error) {
	fmt.Fprintf(c.stderr(), "%s %s: %s\n", c.name(), v.name, oneLine(err))
}

// oneLine flattens err's message onto one line and drops the leading
// "jobgen: " the runtime's errors carry.
func oneLine(err error) string {
	msg := strings.TrimPrefix(err.Error(), "jobgen: ")
	return strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " ")
}

func (c *Command) name() string {
	if c.Name != "" {
		return c.Name
	}
	return filepath.Base(os.Args[0])
}

// prefix is the key prefix the commands use without --prefix.
func (c *Command) prefix() string {
	if c.Engine.Prefix != "" {
		return c.Engine.Prefix
	}
	return runtime.DefaultPrefix
}

func (c *Command) stdout() io.Writer {
	if c.Stdout != nil {
		return c.Stdout
	}
	return os.Stdout
}

func (c *Command) stderr() io.Writer {
	if c.Stderr != nil {
		return c.Stderr
	}
	return os.Stderr
}

func (c *Command) getenv(k string) string {
	if c.Getenv != nil {
		return c.Getenv(k)
	}
	return os.Getenv(k)
}

// session is what a command runs with once its flags are parsed and
// Redis is open.
type session struct {
	c      *Command
	verb   *verb
	engine *runtime.Engine
	ins    *runtime.Inspector // engine's
	args   []string           // positional arguments
	// redisErr is why Redis could not be opened, for a command that runs
	// without it (verb.redisOptional); engine and ins are nil then.
	redisErr error
	out      io.Writer
	errOut   io.Writer
}

// open connects to the Redis of --redis, JOBGEN_REDIS_URL or REDIS_URL.
func (c *Command) open(ctx context.Context, v *verb, fs *flags, args []string) (*session, error) {
	url := fs.redis
	if url == "" {
		url = c.getenv(runtime.URLEnv)
	}
	if url == "" {
		url = c.getenv(fallbackURLEnv)
	}
	if url == "" {
		return nil, fmt.Errorf("no Redis URL: pass --redis URL or set %s (or %s), for example redis://127.0.0.1:6379/0", runtime.URLEnv, fallbackURLEnv)
	}
	cfg := c.Engine
	if fs.prefix != "" {
		cfg.Prefix = fs.prefix
	}
	cfg.AllowEviction = cfg.AllowEviction || fs.allowEviction
	if len(fs.partitions) > 0 {
		cfg.Partitions = maps.Clone(cfg.Partitions)
		if cfg.Partitions == nil {
			cfg.Partitions = map[string]int{}
		}
		maps.Copy(cfg.Partitions, fs.partitions)
	}
	e, err := runtime.Open(ctx, url, cfg)
	if err != nil {
		return nil, err
	}
	return &session{c: c, verb: v, engine: e, ins: runtime.NewInspector(e), args: args, out: c.stdout(), errOut: c.stderr()}, nil
}

// queues returns the queues named by the arguments and --queue, checked;
// if none are named, every known queue.
func (s *session) queues(ctx context.Context, named []string) ([]string, error) {
	if len(named) > 0 {
		for _, q := range named {
			if err := runtime.ValidateQueueName(q); err != nil {
				return nil, usagef("%s", oneLine(err))
			}
		}
		return dedupe(named), nil
	}
	return s.ins.Queues(ctx)
}

func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// table starts a table on w; Flush it when done.
func table(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// writeOverview lists the commands.
func (c *Command) writeOverview(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s <command> [arguments] [flags]\n\nCommands:\n", c.name())
	c.WriteCommands(w)
	fmt.Fprintf(w, "\nRun %s <command> --help for a command's arguments and flags.\n", c.name())
}

// WriteCommands writes the list of commands, one per line with its
// summary, as help shows it. A program that wraps Run in a command line
// of its own can add it to its usage.
func (c *Command) WriteCommands(w io.Writer) {
	tw := table(w)
	for _, v := range verbs {
		summary := v.summary
		if v.needsRouter && c.Router == nil {
			summary += " (from your own binary: console.Main)"
		}
		if v.needsSchedule && c.Schedule == nil {
			summary += " (from your own binary: console.WithSchedule)"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", v.name, summary)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nEvery command takes --redis URL (default $%s, then $%s) and --prefix PREFIX (default %q).\n",
		runtime.URLEnv, fallbackURLEnv, c.prefix())
}

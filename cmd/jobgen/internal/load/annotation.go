package load

import (
	"errors"
	"fmt"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
	"github.com/jobgen/jobgen/internal/jobopt"
	"github.com/jobgen/jobgen/internal/qname"
)

// prefix starts an annotation line. It is a directive comment, so
// CommentGroup.Text leaves it out: the loader reads CommentGroup.List.
const prefix = "//job:"

// gofmtBare is what gofmt makes of a bare "//job:" (which, with nothing
// after the colon, is not a directive, so gofmt reformats it as text).
const gofmtBare = "// job:"

// keys are the annotation's keys, sorted, as listed in error messages.
var keys = slices.Sorted(maps.Keys(setters))

// boolKeys may be written bare, meaning true: the job options of kind
// Bool, and event and sync.
var boolKeys = func() []string {
	out := []string{"event", "sync"}
	for _, o := range jobopt.All {
		if o.Kind == jobopt.Bool {
			out = append(out, o.Key)
		}
	}
	slices.Sort(out)
	return out
}()

// annotation is what one type's `//job:` lines say.
type annotation struct {
	name    string // "" for the default
	laravel string // the PHP job class, or "Class@method"; "" for none
	result  string // the type of the job's result (`result=`); "" for none
	opts    model.Options
	seen    map[string]bool
	// event marks an event type (`event`); listen names the event a
	// listener type listens to (`listen=`), and sync makes it run inside
	// Fire.
	event  bool
	listen string
	sync   bool
	// debounceKey names the field whose value is the job's debounce key
	// (`debounce_key=`).
	debounceKey string
	// group names the field that holds the job's fair group (`group=`).
	group string
	// wire holds the `version=`, `upgrade=` and `decode=` keys (schema.go).
	wire model.WireOptions
}

// tokenError is a problem with one token of an annotation line; offset is
// its byte offset in the text after the prefix.
type tokenError struct {
	offset int
	msg    string
}

// lineKind says how a comment line reads as an annotation.
type lineKind int

const (
	notAnnotation lineKind = iota
	// annotationLine is "//job:" followed by keys, or bare.
	annotationLine
	// spacedLine is "//job: key=value" or "// job: key=value": not a
	// directive, so gofmt turns the first into the second, which is a
	// plain comment. It is reported, not read.
	spacedLine
)

// classify reads one comment, slashes included. For an annotation line
// it returns the text after the prefix.
func classify(comment string) (string, lineKind) {
	if strings.TrimRight(comment, " \t") == gofmtBare {
		return "", annotationLine
	}
	rest, ok := strings.CutPrefix(comment, prefix)
	if !ok {
		rest, ok = strings.CutPrefix(comment, gofmtBare)
		if !ok || !strings.HasPrefix(rest, " ") || strings.TrimSpace(rest) == "" {
			return "", notAnnotation
		}
		// Prose such as "// job: the thing to run" is no annotation;
		// "// job: queue=emails" is one that gofmt has broken.
		toks := fields(rest)
		key, _, hasValue := strings.Cut(toks[0].text, "=")
		if !(hasValue && slices.Contains(keys, key)) && !slices.Contains(boolKeys, key) {
			return "", notAnnotation
		}
		return rest, spacedLine
	}
	if strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "\t") {
		return rest, spacedLine
	}
	return rest, annotationLine
}

// parseLine adds the keys of one annotation line, text being what follows
// the prefix: space-separated key=value pairs, or bare boolean keys.
func (a *annotation) parseLine(text string) []tokenError {
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	var errs []tokenError
	for _, tok := range fields(text) {
		key, value, hasValue := strings.Cut(tok.text, "=")
		if err := a.set(key, value, hasValue); err != "" {
			errs = append(errs, tokenError{offset: tok.offset, msg: err})
		}
	}
	return errs
}

// set applies one key; it returns what is wrong, or "".
func (a *annotation) set(key, value string, hasValue bool) string {
	apply, ok := setters[key]
	if !ok {
		return fmt.Sprintf("unknown key %q in //job: annotation; valid keys: %s", key, strings.Join(keys, ", "))
	}
	if a.seen[key] {
		return fmt.Sprintf("key %s is set twice", key)
	}
	a.seen[key] = true
	if !hasValue {
		if !slices.Contains(boolKeys, key) {
			return fmt.Sprintf("key %s needs a value (%s=...)", key, key)
		}
		value = "true"
	}
	if err := apply(a, value); err != nil {
		return fmt.Sprintf("%s=%s: %v", key, value, err)
	}
	return ""
}

// setter reads the value of one key into a, or says what is wrong with
// it.
type setter func(a *annotation, value string) error

// setters hold, for each key, how its value is read and where it goes:
// a job option's (jobopt.All) into the model's Options by its kind, the
// others into the annotation.
var setters = optionSetters(schemaSetters(map[string]setter{
	"name":    setName,
	"laravel": setLaravel,
	"result":  setResult,
	"event":   flag(func(a *annotation) *bool { return &a.event }),
	"sync":    flag(func(a *annotation) *bool { return &a.sync }),
	"listen":  setListen,
	// A field's name, so not an option of the table: it generates the
	// job's DebounceKey method.
	"debounce_key": setDebounceKey,
	"group":        setGroup,
}))

// optionSetters adds to m a setter for the key of every job option.
func optionSetters(m map[string]setter) map[string]setter {
	for _, o := range jobopt.All {
		m[o.Key] = optionSetter(o)
	}
	return m
}

// optionSetter parses a value of o's kind and stores it in the field of
// model.Options named for o.
func optionSetter(o jobopt.Option) setter {
	return func(a *annotation, value string) error {
		v, err := parseKind(o, value)
		if err != nil {
			return err
		}
		reflect.ValueOf(&a.opts).Elem().FieldByName(o.Name).Set(reflect.ValueOf(v))
		return nil
	}
}

// parseKind reads value as o's kind says.
func parseKind(o jobopt.Option, value string) (any, error) {
	if err := commaJoinedKeys(o, value); err != nil {
		return nil, err
	}
	switch o.Kind {
	case jobopt.String:
		return nonEmpty(o, value)
	case jobopt.PositiveInt:
		return positiveInt(value)
	case jobopt.Bool:
		return parseBool(value)
	case jobopt.PositiveDuration:
		return positiveDuration(value)
	case jobopt.Durations:
		return durationList(value)
	case jobopt.Strings:
		if o.Name == "Needs" {
			return needsList(value)
		}
		return list(value)
	}
	return nil, fmt.Errorf("option %s has no parser for its kind", o.Name)
}

// needsList reads the value of needs=: job type names, each optionally
// after "[]" for a list of such steps. The loader then checks that they
// are jobs of the package with results (needs.go).
func needsList(value string) ([]string, error) {
	items, err := list(value)
	if err != nil {
		return nil, err
	}
	for i, item := range items {
		if !token.IsIdentifier(strings.TrimPrefix(item, "[]")) {
			return nil, fmt.Errorf("item %d (%q): want the name of a job type of this package, or []Name for a list of its steps, such as needs=Charge,[]SendEmail", i+1, item)
		}
	}
	return items, nil
}

// nonEmpty reads a word option; a queue's name also follows the queue
// name rules.
func nonEmpty(o jobopt.Option, value string) (string, error) {
	if value == "" {
		return "", fmt.Errorf("the %s name is empty", o.Key)
	}
	if o.Name == "Queue" {
		if err := qname.Validate(value); err != nil {
			return "", err
		}
	}
	return value, nil
}

// flag is the setter of a bare key kept on the annotation itself.
func flag(field func(*annotation) *bool) setter {
	return func(a *annotation, value string) error {
		v, err := parseBool(value)
		*field(a) = v
		return err
	}
}

func setListen(a *annotation, value string) error {
	if !token.IsIdentifier(value) {
		return errors.New("want the name of an event type of this package, such as listen=OrderShipped")
	}
	a.listen = value
	return nil
}

func setResult(a *annotation, value string) error {
	if !token.IsIdentifier(value) {
		return errors.New("want the name of a type of this package that the handler returns, such as result=Receipt")
	}
	a.result = value
	return nil
}

func setDebounceKey(a *annotation, value string) error {
	if !token.IsIdentifier(value) {
		return errors.New("want the name of a field of the job, such as debounce_key=UserID")
	}
	a.debounceKey = value
	return nil
}

func setGroup(a *annotation, value string) error {
	if !token.IsIdentifier(value) {
		return errors.New("want the name of a string or integer field of the job, such as group=TenantID")
	}
	a.group = value
	return nil
}

func setName(a *annotation, value string) error {
	if !validName(value) {
		return errors.New("a job name is letters, digits and . _ - / : (at least one)")
	}
	a.name = value
	return nil
}

func setLaravel(a *annotation, value string) error {
	if !validPHPJob(value) {
		return errors.New(`want a PHP class such as App\Jobs\SendWelcomeEmail, or a string job such as App\Jobs\SendWelcomeEmail@handle`)
	}
	a.laravel = value
	return nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case strings.ContainsRune("._-/:", r):
		default:
			return false
		}
	}
	return true
}

// validPHPJob: a PHP class name (namespaced with \\), optionally followed
// by @method for a string job.
func validPHPJob(s string) bool {
	class, method, hasMethod := strings.Cut(s, "@")
	if hasMethod && !validPHPName(method) {
		return false
	}
	parts := strings.Split(strings.TrimPrefix(class, `\`), `\`)
	for _, p := range parts {
		if !validPHPName(p) {
			return false
		}
	}
	return true
}

func validPHPName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r >= 0x80) {
			return false
		}
	}
	return true
}

func positiveInt(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("want a whole number of at least 1")
	}
	return n, nil
}

func positiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive Go duration such as 30s, 5m or 1h30m")
	}
	return d, nil
}

func durationList(s string) ([]time.Duration, error) {
	var ds []time.Duration
	for i, item := range strings.Split(s, ",") {
		d, err := time.ParseDuration(item)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("item %d (%q): want a comma-separated list of Go durations such as 10s,1m,5m", i+1, item)
		}
		ds = append(ds, d)
	}
	return ds, nil
}

func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("want true or false")
	}
	return b, nil
}

func list(s string) ([]string, error) {
	items := strings.Split(s, ",")
	for i, item := range items {
		if item == "" {
			return nil, fmt.Errorf("item %d is empty; want a comma-separated list such as mail,billing", i+1)
		}
	}
	return items, nil
}

// word is one space-separated word of an annotation line.
type word struct {
	text   string
	offset int
}

func fields(s string) []word {
	var toks []word
	start := -1
	for i := 0; i <= len(s); i++ {
		space := i == len(s) || s[i] == ' ' || s[i] == '\t'
		switch {
		case space && start >= 0:
			toks = append(toks, word{text: s[start:i], offset: start})
			start = -1
		case !space && start < 0:
			start = i
		}
	}
	return toks
}

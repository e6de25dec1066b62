package load

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzAnnotation feeds the annotation parser arbitrary comment lines. It
// must never panic; an annotation's text is what follows the prefix in
// the comment; every error points inside that text; and parsing is
// deterministic.
func FuzzAnnotation(f *testing.F) {
	for _, s := range []string{
		"//job:", "// job:", "//job:queue=emails tries=5 backoff=10s,1m timeout=30s",
		"//job:name=mail.Send connection=c delay=1s unique_for=1h retry_until=2h max_exceptions=2",
		"//job:encrypted fail_on_timeout=false tags=a,b", "//job: queue=x", "// job: queue=x",
		"//job:queue= tries=0 backoff=1s,,2s tags=a,,b", "//job:queue={x} name=ä", "//job:tries=1 tries=2",
		"//job:\tqueue=x\t", "// job: the thing to run", "//go:generate go tool jobgen", "/*job:queue=x*/",
		"//job:timeout=-1s delay=9999999999h backoff=1e9", "//job:=", "//job:==",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, comment string) {
		text, kind := classify(comment)
		if kind == notAnnotation {
			return
		}
		if !strings.HasSuffix(comment, text) {
			t.Fatalf("classify(%q) = %q, which is not the end of the comment", comment, text)
		}
		var a1, a2 annotation
		errs1 := a1.parseLine(text)
		errs2 := a2.parseLine(text)
		if !reflect.DeepEqual(a1, a2) || !reflect.DeepEqual(errs1, errs2) {
			t.Fatalf("parsing %q twice gives different results", text)
		}
		for _, e := range errs1 {
			if e.offset < 0 || e.offset >= len(text) || e.msg == "" {
				t.Fatalf("error %+v of %q points outside the text", e, text)
			}
		}
	})
}

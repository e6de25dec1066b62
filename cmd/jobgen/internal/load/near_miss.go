package load

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jobgen/jobgen/internal/jobopt"
)

// commaJoinedKeys reports keys joined to o's value with commas, as in
// queue=billing,tries=3, which would otherwise read as a queue named
// "billing,tries=3": an item after a comma that is a key=value pair of
// a known key, or, but in a list of words (tags=mail,encrypted), a bare
// boolean key.
func commaJoinedKeys(o jobopt.Option, value string) error {
	items := strings.Split(value, ",")
	for _, item := range items[1:] {
		key, _, hasValue := strings.Cut(item, "=")
		known := slices.ContainsFunc(jobopt.Keys, func(k jobopt.Key) bool { return k.Key == key })
		if known && (hasValue || o.Kind != jobopt.Strings && slices.Contains(boolKeys, key)) {
			return fmt.Errorf("keys are separated by spaces, not commas: write %s=%s", o.Key, strings.Join(items, " "))
		}
	}
	return nil
}

// nearMiss reports whether comment, slashes included, is a mistyped
// annotation that would otherwise be ignored without a word ("//jobs:",
// "//Job:", "// job:queue=x", "//job queue=x"), and returns the line as
// it should be written. Prose that starts with "Job:" or "Jobs" and goes
// on with no key is no annotation.
func nearMiss(comment string) (fix string, ok bool) {
	body, ok := strings.CutPrefix(comment, "//")
	if !ok {
		return "", false
	}
	spaced := strings.TrimLeft(body, " \t")
	lead := len(body) - len(spaced)
	word := spaced
	if i := strings.IndexFunc(spaced, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }); i >= 0 {
		word = spaced[:i]
	}
	if !strings.EqualFold(word, "job") && !strings.EqualFold(word, "jobs") {
		return "", false
	}
	rest := spaced[len(word):]
	colon := strings.HasPrefix(rest, ":")
	rest = strings.TrimPrefix(rest, ":")
	if !colon && rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", false // "//jobless", "// job-board"
	}
	toks := fields(rest)
	switch {
	case lead == 0 && colon:
		// "//jobs:queue=x", "//Job:": a directive's form, never prose.
	case len(toks) > 0 && looksLikeKey(toks[0].text):
		// "// Job: queue=x", "// job:queue=x", "//job queue=x".
	default:
		return "", false // prose: "// Jobs: the ones below", "// job runs"
	}
	words := make([]string, len(toks))
	for i, t := range toks {
		words[i] = t.text
	}
	return prefix + strings.Join(words, " "), true
}

// looksLikeKey reports whether tok reads as an annotation's key: a
// key=value pair whose key is lower-case letters and underscores, or a
// bare key that may be written alone (boolKeys).
func looksLikeKey(tok string) bool {
	key, _, hasValue := strings.Cut(tok, "=")
	if !hasValue {
		return slices.Contains(boolKeys, key)
	}
	if key == "" {
		return false
	}
	for _, r := range key {
		if !('a' <= r && r <= 'z' || r == '_') {
			return false
		}
	}
	return true
}

// Package lua holds jobgen's Redis scripts: one file per operation
// (<operation>.lua; the Laravel bridge's are laravel_<operation>.lua),
// each headed by the keys and arguments it takes and what it returns,
// and the helpers several scripts share in lib/. Every key a script
// touches comes in through KEYS.
//
// Its Go API exists for jobgen's own packages (runtime, laravel), which
// run the scripts by SHA with the NOSCRIPT recovery of internal/send; it
// is not meant for applications.
//
// A script names the helpers it needs on a line of its own,
//
//	-- uses: wrong_type, now_ms
//
// and the line is replaced, when the package loads, by the text of each
// helper (lib/<name>.lua), in the order named. So a helper is written
// once, and every script still reaches Redis as one text whose SHA is
// the same on every run.
package lua

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
)

//go:embed *.lua lib/*.lua
var files embed.FS

// Script is one operation's script, with its helpers joined in.
type Script struct {
	Name string // the file's name without .lua
	Src  string // the text sent to Redis
	SHA  string // the SHA1 of Src, as EVALSHA takes it
}

var all = load()

// All returns every script, in name order.
func All() []*Script { return all }

// Get returns the script name. It panics if there is none: the names are
// fixed at build time.
func Get(name string) *Script {
	for _, s := range all {
		if s.Name == name {
			return s
		}
	}
	panic(fmt.Sprintf("jobgen: no embedded script %s", name))
}

// usesLine matches a line naming the helpers a script needs.
var usesLine = regexp.MustCompile(`(?m)^-- uses: ([a-z_, ]+)\n`)

func load() []*Script {
	names, err := fs.Glob(files, "*.lua")
	if err != nil || len(names) == 0 {
		panic(fmt.Sprintf("jobgen: no embedded scripts: %v", err))
	}
	out := make([]*Script, len(names))
	for i, f := range names {
		b, err := files.ReadFile(f)
		if err != nil {
			panic(fmt.Sprintf("jobgen: embedded script %s: %v", f, err))
		}
		name := strings.TrimSuffix(path.Base(f), ".lua")
		src, err := join(string(b))
		if err != nil {
			panic(fmt.Sprintf("jobgen: embedded script %s: %v", name, err))
		}
		out[i] = &Script{Name: name, Src: src, SHA: SHA1(src)}
	}
	return out
}

// join replaces each "-- uses:" line of src with the helpers it names.
func join(src string) (string, error) {
	var bad error
	joined := usesLine.ReplaceAllStringFunc(src, func(line string) string {
		var b strings.Builder
		for _, n := range strings.Split(usesLine.FindStringSubmatch(line)[1], ",") {
			n = strings.TrimSpace(n)
			lib, err := files.ReadFile("lib/" + n + ".lua")
			if err != nil {
				bad = fmt.Errorf("uses %q, which lib/ does not have", n)
				return line
			}
			b.Write(lib)
		}
		return b.String()
	})
	return joined, bad
}

// SHA1 returns the hex SHA1 of s, as Redis names a script.
func SHA1(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

package doccheck

import (
	"regexp"
	"strconv"
	"strings"
)

// A Link is one link of a Markdown file.
type Link struct {
	Line   int    // 1-based line of the file
	Target string // as written: "docs/cluster.md#failover", "#testing"
}

var (
	// [text](target) and ![alt](target); the target may be <bracketed>
	// and followed by a "title".
	inlineLink = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"[^"]*")?\s*\)`)
	// [label]: target
	refDef = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)`)
	// <a name="x">, <a id="x">, <span id="x">
	htmlAnchor = regexp.MustCompile(`<[a-zA-Z]+\s[^>]*\b(?:name|id)="([^"]+)"`)
	heading    = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$`)
)

// prose returns the lines of a Markdown file with fenced code blocks
// blanked, so that line numbers stay those of the file.
func prose(text string) []string {
	lines := strings.Split(text, "\n")
	fence := ""
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if fence != "" {
			if strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == "" {
				fence = ""
			}
			lines[i] = ""
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			for _, c := range t[3:] {
				if c != rune(fence[0]) {
					break
				}
				fence += string(c)
			}
			lines[i] = ""
		}
	}
	return lines
}

// Links lists the links of a Markdown text outside code, those with a
// scheme included.
func Links(text string) []Link {
	var out []Link
	for i, l := range prose(text) {
		l = withoutCodeSpans(l)
		if m := refDef.FindStringSubmatch(l); m != nil {
			out = append(out, Link{Line: i + 1, Target: strings.Trim(m[1], "<>")})
			continue
		}
		for _, m := range inlineLink.FindAllStringSubmatch(l, -1) {
			out = append(out, Link{Line: i + 1, Target: strings.Trim(m[1], "<>")})
		}
	}
	return out
}

// Anchors returns the set of anchors of a Markdown text: GitHub's slug of
// each heading (with -1, -2 ... for repeats) and the name or id of each
// HTML element that declares one.
func Anchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, l := range prose(text) {
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			anchors[m[1]] = true
		}
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := Slug(m[2])
		if n := seen[s]; n > 0 {
			anchors[s+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return anchors
}

// withoutCodeSpans returns a line with its code spans removed: a run of
// backticks up to the next run of the same length.
func withoutCodeSpans(l string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(l, '`')
		if i < 0 {
			return b.String() + l
		}
		b.WriteString(l[:i])
		n := len(l[i:]) - len(strings.TrimLeft(l[i:], "`"))
		open := l[i : i+n]
		rest := l[i+n:]
		end := -1
		for j := 0; j < len(rest); {
			k := strings.Index(rest[j:], open)
			if k < 0 {
				break
			}
			k += j
			m := len(rest[k:]) - len(strings.TrimLeft(rest[k:], "`"))
			if m == n {
				end = k
				break
			}
			j = k + m
		}
		if end < 0 { // an unmatched run is literal backticks
			b.WriteString(open)
			l = rest
			continue
		}
		l = rest[end+n:]
	}
}

package doccheck

import (
	"regexp"
	"strings"
	"unicode"
)

var (
	linkText = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	htmlTag  = regexp.MustCompile(`<[^>]*>`)
)

// Slug returns the anchor GitHub gives a heading's text, before repeats
// are numbered: the text as rendered (links by their text, no markup),
// lowercased, with every character but letters, digits, marks, spaces,
// hyphens and underscores dropped, and each space made a hyphen.
func Slug(heading string) string {
	s := linkText.ReplaceAllString(heading, "$1")
	s = htmlTag.ReplaceAllString(s, "")
	s = strings.ToLower(strings.TrimSpace(s))
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

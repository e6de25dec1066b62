package dashboard

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Names on the pages come from whoever dispatches jobs and runs workers:
// a right-to-left override makes "invoices\u202efdp.exe" read as
// "invoicesexe.pdf", and <bdi> only keeps the flip from spreading to the
// text beside it. So every control character in a page's text is shown
// as what it is, ⟨U+202E⟩, wherever a name is printed (lists, titles,
// confirmations, errors, and title attributes, which a browser shows as
// a tooltip). Other attribute values are left as they are: a form's
// hidden field must send the name unchanged.

// hiddenControl reports whether r is a character that changes how the
// text around it reads, or that cannot be seen: C0 and C1 controls
// (tab, newline and carriage return aside), bidi controls, zero-width
// spaces and joiners' kin, and line and paragraph separators.
func hiddenControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	case '\u200b', '\u2060', '\ufeff', '\u2028', '\u2029', '\u00ad', '\u180e':
		return true
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// showControls rewrites the text of page, an HTML document as
// html/template writes it, with each hidden control character shown as
// ⟨U+XXXX⟩. Inside a tag (between < and >) nothing changes but the
// value of a title attribute: html/template escapes < and > within
// attribute values, so the first > after a < ends the tag, and it
// quotes every attribute value with " and escapes " within it, so the
// next " ends the title.
func showControls(page []byte) []byte {
	if !hasHiddenControl(page) {
		return page
	}
	out := make([]byte, 0, len(page)+64)
	inTag, inTitle := false, false
	for i := 0; i < len(page); {
		c := page[i]
		switch {
		case inTitle:
			if c == '"' {
				inTitle = false
			}
		case c == '<':
			inTag = true
		case c == '>':
			inTag = false
		case inTag && c == '"' && i >= 6 && string(page[i-6:i]) == "title=" && (i == 6 || page[i-7] == ' '):
			inTitle = true
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(page[i:])
		if (!inTag || inTitle) && hiddenControl(r) {
			out = fmt.Appendf(out, "⟨U+%04X⟩", r)
		} else {
			out = append(out, page[i:i+n]...)
		}
		i += n
	}
	return out
}

// hasHiddenControl reports whether page holds any hidden control
// character at all, so that most pages are passed on unchanged.
func hasHiddenControl(page []byte) bool {
	for i := 0; i < len(page); {
		if c := page[i]; c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(page[i:])
		if hiddenControl(r) {
			return true
		}
		i += n
	}
	return false
}

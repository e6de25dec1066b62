package doccheck

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// MaxReadmeLines is the longest README.md may be: a front door a
// newcomer reads in five minutes, with the manual in docs/.
const MaxReadmeLines = 250

var scheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// Check resolves each relative link of the Markdown file at path (inside
// the repository at root) and returns one error per dead link, naming the
// file, the line and what is missing. Links with a scheme are left alone.
func Check(root, path string) ([]error, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, l := range Links(string(text)) {
		if err := checkLink(root, path, string(text), l.Target); err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: link %q: %w", rel, l.Line, l.Target, err))
		}
	}
	return errs, nil
}

// checkLink checks one link of the file at from, whose text is text.
func checkLink(root, from, text, target string) error {
	if target == "" {
		return fmt.Errorf("empty target")
	}
	if scheme.MatchString(target) || strings.HasPrefix(target, "//") {
		return nil
	}
	file, frag, _ := strings.Cut(target, "#")
	file, err := url.PathUnescape(file)
	if err != nil {
		return err
	}
	frag, err = url.PathUnescape(frag)
	if err != nil {
		return err
	}
	dest := from
	if file != "" {
		if strings.HasPrefix(file, "/") {
			dest = filepath.Join(root, file)
		} else {
			dest = filepath.Join(filepath.Dir(from), file)
		}
		if r, err := filepath.Rel(root, dest); err != nil || r == ".." || strings.HasPrefix(r, "../") {
			return fmt.Errorf("points outside the repository")
		}
		if _, err := os.Stat(dest); err != nil {
			return fmt.Errorf("no such file or directory %s", filepath.ToSlash(mustRel(root, dest)))
		}
		text = ""
	}
	if frag == "" || !strings.HasSuffix(dest, ".md") {
		return nil
	}
	if text == "" {
		b, err := os.ReadFile(dest)
		if err != nil {
			return err
		}
		text = string(b)
	}
	if !Anchors(text)[frag] {
		return fmt.Errorf("no heading with anchor #%s in %s", frag, filepath.ToSlash(mustRel(root, dest)))
	}
	return nil
}

func mustRel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return r
}

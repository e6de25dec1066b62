// Command modproxy writes a Go module proxy on disk, for GOPROXY=file://,
// holding the modules in the given directories at one version, as a tag
// of that version would publish them from this working tree:
//
//	<module path>/@v/list          the version
//	<module path>/@v/<version>.info {"Version": ..., "Time": ...}
//	<module path>/@v/<version>.mod  the directory's go.mod
//	<module path>/@v/<version>.zip  its files, as the go command zips a
//	                                module (golang.org/x/mod/zip): no
//	                                nested modules, no VCS directories
//
// scripts/release-check runs it:
//
//	go run ./internal/modproxy -out DIR -version v0.1.0 . otel prometheus outbox/pgxoutbox
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	modzip "golang.org/x/mod/zip"
)

func main() {
	out := flag.String("out", "", "directory to write the proxy into")
	version := flag.String("version", "", "the version to publish, e.g. v0.1.0")
	flag.Parse()
	if err := run(*out, *version, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(out, version string, dirs []string) error {
	if out == "" || len(dirs) == 0 {
		return fmt.Errorf("usage: modproxy -out DIR -version vX.Y.Z moduledir...")
	}
	if !semver.IsValid(version) || semver.Canonical(version) != version {
		return fmt.Errorf("-version %q is not a canonical semantic version such as v0.1.0", version)
	}
	for _, dir := range dirs {
		path, err := publish(out, version, dir)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		fmt.Fprintf(os.Stderr, "modproxy: %s@%s from %s\n", path, version, dir)
	}
	return nil
}

// publish writes the module in dir at version into the proxy at out and
// returns its path.
func publish(out, version, dir string) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return "", fmt.Errorf("go.mod names no module")
	}
	m := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return "", err
	}
	esc, err := module.EscapePath(path)
	if err != nil {
		return "", err
	}
	at := filepath.Join(out, filepath.FromSlash(esc), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return "", err
	}
	var zip bytes.Buffer
	if err := modzip.CreateFromDir(&zip, m, dir); err != nil {
		return "", err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return "", err
	}
	for name, body := range map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": info,
		version + ".mod":  gomod,
		version + ".zip":  zip.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(at, name), body, 0o644); err != nil {
			return "", err
		}
	}
	return path, nil
}

package generate

import (
	"fmt"
	"go/token"
	"os"
	"path/filepath"

	"github.com/jobgen/jobgen/cmd/jobgen/internal/load"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/lock"
	"github.com/jobgen/jobgen/cmd/jobgen/internal/model"
)

// checkLock checks p against the schema lock in its directory and
// returns the lock file to write: nil when p has no wire types and no
// lock, a removal (nil Src) when the last type left with the lock's
// consent. It fills in p's jobs' Wire.Optional, which the emitter reads.
func checkLock(p *model.Package, opts Options) (*File, load.List) {
	if p.Dir == "" {
		return nil, nil
	}
	path := filepath.Join(p.Dir, model.LockFile)
	old, err := lock.Read(path)
	if err != nil {
		return nil, load.List{{Pos: posOf(path), Msg: err.Error()}}
	}
	if len(p.Wire) == 0 && len(old.Types) == 0 {
		return nil, nil
	}
	next, errs := lock.Check(p, old, path, opts.AcceptBreak)
	if len(errs) > 0 {
		return nil, errs
	}
	if len(next.Types) == 0 {
		if _, err := os.Stat(path); err == nil {
			return &File{Package: p.Path, Path: path}, nil
		}
		return nil, nil
	}
	src, err := next.Encode()
	if err != nil {
		return nil, load.List{{Pos: posOf(path), Msg: fmt.Sprintf("encode the schema lock: %v", err)}}
	}
	return &File{Package: p.Path, Path: path, Src: src}, nil
}

func posOf(path string) token.Position { return token.Position{Filename: path} }

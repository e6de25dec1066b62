//go:build !unix

package runtime

import "os"

func notifyPause(chan os.Signal) {}

func isPauseSignal(os.Signal) bool { return false }

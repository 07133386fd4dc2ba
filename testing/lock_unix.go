//go:build unix

package testing

import (
	"errors"
	"os"
	"syscall"
)

const flockSupported = true

// tryFlock takes a shared or exclusive flock without waiting; false when another holder conflicts.
func tryFlock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return false, nil
		default:
			return false, err
		}
	}
}

func unlockFlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package profilerconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// dirPin is an allow-listed directory as resolved when it was pinned. Without openat this platform compares real
// paths only: a symlink swapped between the check and the open is not caught here (Grafana on Windows, where
// creating symlinks needs privileges, is the only such deployment).
type dirPin struct{ dir string }

func pinDir(real string) (*dirPin, error) {
	fi, err := os.Stat(real)
	if err != nil {
		return nil, ioError("inspect", real, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", real)
	}
	return &dirPin{dir: real}, nil
}

type dirHandle struct{ pin *dirPin }

func openDir(pin *dirPin) (*dirHandle, error) {
	real, err := filepath.EvalSymlinks(pin.dir)
	if err != nil || real != pin.dir {
		return nil, fmt.Errorf("%w: %s is no longer the directory pinned when the settings were saved; if that change is intended, save the app settings again", ErrNotAllowed, pin.dir)
	}
	return &dirHandle{pin: pin}, nil
}

func (d *dirHandle) close() {}

func (d *dirHandle) path(name string) string { return filepath.Join(d.pin.dir, name) }

func (d *dirHandle) open(name string, flags int, perm uint32) (*os.File, error) {
	p := d.path(name)
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w (a symlink); allow-list the file itself", p, ErrNotRegular)
	}
	f, err := os.OpenFile(p, flags, fs.FileMode(perm))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, ioError("open", p, err)
	}
	return f, nil
}

type identity struct {
	size int64
	mod  int64
}

func identityOf(fi fs.FileInfo) identity { return identity{fi.Size(), fi.ModTime().UnixNano()} }

func (d *dirHandle) current(name string) (identity, bool, error) {
	fi, err := os.Lstat(d.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return identity{}, false, nil
	}
	if err != nil {
		return identity{}, false, ioError("inspect", d.path(name), err)
	}
	return identityOf(fi), true, nil
}

func (d *dirHandle) rename(from, to string) error {
	if err := os.Rename(d.path(from), d.path(to)); err != nil {
		return ioError("rename onto", d.path(to), err)
	}
	return nil
}

func (d *dirHandle) remove(name string) { _ = os.Remove(d.path(name)) }

func (d *dirHandle) sync() error { return nil }

const (
	openRead   = os.O_RDONLY
	openLock   = os.O_RDWR | os.O_CREATE
	openCreate = os.O_WRONLY | os.O_CREATE | os.O_EXCL
)

//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package profilerconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// dirPin is an allow-listed directory as resolved when it was pinned: its real path and its identity.
type dirPin struct {
	dir      string
	dev, ino uint64
}

func pinDir(real string) (*dirPin, error) {
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return nil, ioError("inspect", real, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, fmt.Errorf("%s is not a directory", real)
	}
	return &dirPin{dir: real, dev: uint64(st.Dev), ino: st.Ino}, nil //nolint:unconvert // Dev is int32 on darwin
}

// dirHandle is an open pinned directory: every file operation is relative to it and follows no symlink, so
// neither a swapped directory nor a file swapped for a symlink can redirect a read or a write.
type dirHandle struct {
	fd  int
	pin *dirPin
}

// openDir opens the pinned directory and checks it is still the same directory (a replaced or re-pointed path
// component changes its identity).
func openDir(pin *dirPin) (*dirHandle, error) {
	fd, err := unix.Open(pin.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("%w: %s is no longer the directory pinned when the settings were saved; if that change is intended, save the app settings again", ErrNotAllowed, pin.dir)
		}
		return nil, ioError("open directory", pin.dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd) // already failing; the error returned says why
		return nil, ioError("inspect", pin.dir, err)
	}
	if uint64(st.Dev) != pin.dev || st.Ino != pin.ino { //nolint:unconvert // Dev is int32 on darwin
		_ = unix.Close(fd) // already failing; the error returned says why
		return nil, fmt.Errorf("%w: %s was replaced after the settings were saved; if that change is intended, save the app settings again", ErrNotAllowed, pin.dir)
	}
	return &dirHandle{fd: fd, pin: pin}, nil
}

func (d *dirHandle) close() { _ = unix.Close(d.fd) } // read-only handle: nothing to flush

// path is name inside the directory, for messages.
func (d *dirHandle) path(name string) string { return d.pin.dir + string(os.PathSeparator) + name }

// open opens name in the directory without following a symlink; a symlink is ErrNotRegular and a missing file
// fs.ErrNotExist.
func (d *dirHandle) open(name string, flags int, perm uint32) (*os.File, error) {
	fd, err := unix.Openat(d.fd, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, perm)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) {
			return nil, fmt.Errorf("%s: %w (a symlink); allow-list the file itself", d.path(name), ErrNotRegular)
		}
		if errors.Is(err, unix.ENOENT) {
			return nil, fs.ErrNotExist
		}
		return nil, ioError("open", d.path(name), err)
	}
	return os.NewFile(uintptr(fd), d.path(name)), nil
}

// identity is what tells two files apart.
type identity struct{ dev, ino uint64 }

func identityOf(fi fs.FileInfo) identity {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return identity{uint64(st.Dev), st.Ino} //nolint:unconvert // Dev is int32 on darwin
	}
	return identity{}
}

// current is the identity of name in the directory now (not following a symlink), or false when it is missing.
func (d *dirHandle) current(name string) (identity, bool, error) {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return identity{}, false, nil
	}
	if err != nil {
		return identity{}, false, ioError("inspect", d.path(name), err)
	}
	return identity{uint64(st.Dev), st.Ino}, true, nil //nolint:unconvert // Dev is int32 on darwin
}

func (d *dirHandle) rename(from, to string) error {
	if err := unix.Renameat(d.fd, from, d.fd, to); err != nil {
		return ioError("rename onto", d.path(to), err)
	}
	return nil
}

func (d *dirHandle) remove(name string) { _ = unix.Unlinkat(d.fd, name, 0) }

// sync makes a rename durable.
func (d *dirHandle) sync() error {
	if err := unix.Fsync(d.fd); err != nil && !errors.Is(err, unix.EINVAL) {
		return ioError("sync directory", d.pin.dir, err)
	}
	return nil
}

const (
	openRead   = unix.O_RDONLY
	openLock   = unix.O_RDWR | unix.O_CREAT
	openCreate = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL
)

// Package packaging turns dist/ into the zip Grafana installs and checks that archive the way Grafana's plugin
// validator does, offline: the validator itself cannot be installed here and aborts at its first network call.
package packaging

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// File is one entry of a plugin archive.
type File struct {
	Mode fs.FileMode
	Data []byte
}

// Archive is a plugin archive's files keyed by slash path, including the top-level folder.
type Archive map[string]File

// Zip writes distDir into zipPath under one top-level folder named rootName, keeping file modes.
func Zip(distDir, rootName, zipPath string) error {
	out, err := os.Create(zipPath)
	if err != nil {
		return err
	}
	// Files are opened through an os.Root so that a symlink swapped in during the walk cannot lead outside distDir.
	root, err := os.OpenRoot(distDir)
	if err != nil {
		out.Close()
		return err
	}
	defer root.Close()
	zw := zip.NewWriter(out)
	// Fast deflate: the archive is mostly Go executables, where the best level saves little and costs seconds.
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	walkErr := filepath.WalkDir(distDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(distDir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := zip.FileInfoHeader(info)
		if err != nil {
			return err
		}
		hdr.Name = path.Join(rootName, filepath.ToSlash(rel))
		hdr.Method = zip.Deflate
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		f, err := root.Open(rel)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	if err := zw.Close(); err != nil && walkErr == nil {
		walkErr = err
	}
	if err := out.Close(); err != nil && walkErr == nil {
		walkErr = err
	}
	return walkErr
}

// ReadZip loads every file of a zip archive into memory.
func ReadZip(zipPath string) (Archive, error) {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	a := Archive{}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		_, err = io.Copy(&buf, rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Name, err)
		}
		a[f.Name] = File{Mode: f.Mode(), Data: buf.Bytes()}
	}
	return a, nil
}

// Names lists the archive's paths in order.
func (a Archive) Names() []string {
	names := make([]string, 0, len(a))
	for n := range a {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// topDirs returns the distinct first path elements of the archive.
func (a Archive) topDirs() []string {
	seen := map[string]bool{}
	for n := range a {
		top, _, _ := strings.Cut(n, "/")
		seen[top] = true
	}
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

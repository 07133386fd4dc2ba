package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// writeModule adds the module in repo/dir to the proxy folder out under
// version and returns its path.
func writeModule(out, repo, dir, version string) (string, error) {
	root := filepath.Join(repo, dir)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("reading the go.mod of %s: %w", dir, err)
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return "", fmt.Errorf("no module line in %s/go.mod", dir)
	}
	mv := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return "", fmt.Errorf("checking %s@%s: %w", path, version, err)
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return "", fmt.Errorf("escaping %s: %w", path, err)
	}
	vdir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", vdir, err)
	}
	files, err := moduleFiles(root)
	if err != nil {
		return "", err
	}
	var zipped bytes.Buffer
	if err := zip.Create(&zipped, mv, files); err != nil {
		return "", fmt.Errorf("zipping %s@%s: %w", path, version, err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC()})
	if err != nil {
		return "", fmt.Errorf("encoding the info of %s: %w", path, err)
	}
	ev, err := module.EscapeVersion(version)
	if err != nil {
		return "", fmt.Errorf("escaping %s: %w", version, err)
	}
	for ext, data := range map[string][]byte{".info": info, ".mod": gomod, ".zip": zipped.Bytes()} {
		if err := os.WriteFile(filepath.Join(vdir, ev+ext), data, 0o644); err != nil {
			return "", fmt.Errorf("writing %s@%s%s: %w", path, version, ext, err)
		}
	}
	list, err := os.OpenFile(filepath.Join(vdir, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return "", fmt.Errorf("opening the version list of %s: %w", path, err)
	}
	defer list.Close()
	if _, err := fmt.Fprintln(list, version); err != nil {
		return "", fmt.Errorf("listing %s@%s: %w", path, version, err)
	}
	return path, nil
}

// moduleFiles lists the files of the module rooted at root that git tracks
// or would track, leaving out nested modules (folders with a go.mod).
func moduleFiles(root string) ([]zip.File, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	listed, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("listing the files of %s with git: %w", root, err)
	}
	var names []string
	nested := map[string]bool{}
	for _, name := range strings.Split(string(listed), "\x00") {
		if name == "" {
			continue
		}
		names = append(names, name)
		if d := filepath.Dir(name); filepath.Base(name) == "go.mod" && d != "." {
			nested[d] = true
		}
	}
	var files []zip.File
	for _, name := range names {
		if inNested(name, nested) {
			continue
		}
		full := filepath.Join(root, name)
		if _, err := os.Lstat(full); os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		files = append(files, file{name: filepath.ToSlash(name), full: full})
	}
	return files, nil
}

func inNested(name string, nested map[string]bool) bool {
	for d := filepath.Dir(name); d != "."; d = filepath.Dir(d) {
		if nested[d] {
			return true
		}
	}
	return false
}

// file is a zip.File on disk.
type file struct{ name, full string }

func (f file) Path() string                 { return f.name }
func (f file) Lstat() (os.FileInfo, error)  { return os.Lstat(f.full) }
func (f file) Open() (io.ReadCloser, error) { return os.Open(f.full) }

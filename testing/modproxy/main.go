// Command modproxy writes a module proxy folder (the file:// GOPROXY layout:
// <module>/@v/list, .info, .mod, .zip) holding modules of this repository as
// their files are in the working tree, each under a version given on the
// command line. The check script beside it installs them from there in a
// module outside the repository, as a user of the published modules would.
//
//	modproxy -out DIR -repo ROOT DIR=VERSION...
//
// Each DIR (relative to ROOT) holds a go.mod; the module's files are those
// git tracks or would track (git ls-files --cached --others
// --exclude-standard), minus those of nested modules.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
)

func main() {
	out := flag.String("out", "", "proxy folder to write (created)")
	repo := flag.String("repo", ".", "root of the git working tree")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -out DIR [-repo ROOT] MODULE_DIR=VERSION...")
		os.Exit(2)
	}
	for _, arg := range flag.Args() {
		dir, version, ok := strings.Cut(arg, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "modproxy: %q is not MODULE_DIR=VERSION\n", arg)
			os.Exit(2)
		}
		path, err := writeModule(*out, *repo, dir, version)
		if err != nil {
			fmt.Fprintf(os.Stderr, "modproxy: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("%s@%s\n", path, version)
	}
}

package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
)

// version is set at build time (-ldflags "-X main.version=v1.2.3"); otherwise
// it is what the Go toolchain recorded (stampedVersion), or "dev".
var version = "dev"

// stampedVersion is the main module's version as the build recorded it: a
// release's for go install …@v1.2.3, and for a go build or go install in a
// git checkout the commit's pseudo-version (v0.0.0-<time>-<commit>, with
// +dirty for uncommitted changes); empty when nothing was recorded (go
// run, or -buildvcs=false).
func stampedVersion(bi *debug.BuildInfo) string {
	if bi == nil || bi.Main.Version == "" || bi.Main.Version == "(devel)" {
		return ""
	}
	return bi.Main.Version
}

// checkoutVersion is, for a build that recorded no version, the commit of
// the checkout its source is in, as git describes it ("dev (9fbdf70-dirty)"):
// go run compiles from a checkout and records none. It asks git once, for
// --version only, and is "dev" without git or a checkout (a -trimpath
// build's source paths are not on disk).
func checkoutVersion() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "dev"
	}
	out, err := exec.Command("git", "-C", filepath.Dir(file), "describe", "--tags", "--always", "--dirty").Output()
	if err != nil || len(strings.TrimSpace(string(out))) == 0 {
		return "dev"
	}
	return "dev (" + strings.TrimSpace(string(out)) + ")"
}

// setVersion fills version in for a build whose version was not set at
// link time; args are the command line, whose --version alone is worth
// asking git for.
func setVersion(args []string) {
	if version != "dev" {
		return
	}
	bi, _ := debug.ReadBuildInfo()
	if v := stampedVersion(bi); v != "" {
		version = v
	} else if slices.Contains(args, "--version") {
		version = checkoutVersion()
	}
}

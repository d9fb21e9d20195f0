// Package lambdabuild holds the one command line that compiles a Go Lambda
// function for the provided.al2023 runtime: the CDK app builds the deployed
// assets with it, and the tests that run functions build theirs the same way,
// so what is tested is compiled as what is deployed.
package lambdabuild

import (
	"os"
	"os/exec"
)

// Command returns go build of the package pkg (a path relative to the
// command's Dir, such as ./functions/search) into the file out, for Linux on
// goarch ("arm64" on Lambda; the host's to run it here).
//
// lambda.norpc drops the RPC mode only the go1.x runtime used; CGO_ENABLED=0
// makes the binary static, as provided.al2023 wants; -trimpath and
// -buildvcs=false make the binary depend on the code alone, so that its
// asset hash, and with it the deployed function, changes only when the code
// does (not with every commit or checkout path); -s -w strip it.
func Command(pkg, out, goarch string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-buildvcs=false",
		"-ldflags=-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	return cmd
}

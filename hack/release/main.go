// Command release holds what the release checks need beside goreleaser,
// kept in a module of its own so that the plugin's go.mod stays lean:
//
//	release krew-manifest -template .krew.yaml -dist dist -tag vX.Y.Z
//	    renders the krew-release-bot template with the bot's own code
//	    against goreleaser's archives, offline (make krew-validate)
//	release modproxy -root DIR -version VERSION -out DIR
//	    serves the checkout as a module version (make go-install-check)
package main

import (
	"fmt"
	"os"
)

// binaryName is the plugin's binary, and its archives' names' start.
const binaryName = "kubectl-schedq"

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "krew-manifest":
		err = runKrewManifest(os.Args[2:])
	case "modproxy":
		err = runModProxy(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "release %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release krew-manifest|modproxy [flags]  (-h for the flags of each)")
	os.Exit(2)
}

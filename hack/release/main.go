// Command release builds kubectl-schedq's release archives and renders its
// krew manifest. It is the engine behind `make dist` and `make krew-manifest`,
// kept in its own module so that the plugin's go.mod stays lean.
//
//	release dist -root DIR -version vX.Y.Z -ldflags FLAGS [-out dist] [-mtime UNIX]
//	release krew-manifest -template .krew.yaml -dist dist -version vX.Y.Z -o krew/schedq.yaml [-compare FILE]
//	release modproxy -root DIR -version VERSION -out DIR
//	release compare -version VERSION DIR1 DIR2
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "dist":
		err = runDist(os.Args[2:])
	case "krew-manifest":
		err = runKrewManifest(os.Args[2:])
	case "modproxy":
		err = runModProxy(os.Args[2:])
	case "compare":
		err = runCompare(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "release %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release dist|krew-manifest|modproxy|compare [flags]  (-h for the flags of each)")
	os.Exit(2)
}

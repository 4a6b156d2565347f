// Command gatehouse stands between AI agents and this machine: it inspects
// and freezes skill bundles, asks for consent, runs approved scripts under
// a bounded protocol and records process evidence. Everything lives in
// package app; this file only hands over the process's arguments (Wails
// needs the main package at the module root).
package main

import (
	"os"

	"github.com/gatehouse/gatehouse/app"
	"github.com/gatehouse/gatehouse/backend/confine"
)

func main() {
	// A launcher of a confined script never returns from here (package
	// confine): it applies the confinement and executes the script.
	confine.MaybeLaunch()
	// The app is not dumpable: a script running as the same user cannot
	// read its memory or environment through /proc.
	confine.Harden()
	os.Exit(app.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

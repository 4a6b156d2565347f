// Package bundles embeds the example skill bundles that ship with
// Gatehouse. Each subfolder is one portable Agent Skills bundle; this Go
// file is the only non-bundle file here (no top-level .md files: those
// would be discovered as legacy flat skills).
package bundles

import (
	"embed"
	"io/fs"
)

//go:embed */*
var embedded embed.FS

// FS returns the bundled skills as a read-only file system whose top-level
// directories are the bundles.
func FS() fs.FS { return embedded }

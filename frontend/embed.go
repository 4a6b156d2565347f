// Package frontend embeds the built web UI (frontend/dist, produced by
// `npm run build`) so one binary carries it to the desktop window and to
// browser mode.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist returns the built UI with index.html at its root. Before the first
// `npm run build` it holds only a placeholder.
func Dist() fs.FS {
	sub, _ := fs.Sub(dist, "dist")
	return sub
}

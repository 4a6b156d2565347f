// Package buildassets carries the Wails build assets that the program
// itself needs at run time: the application icon. The folder is also the
// Wails build directory (wails.json "build:dir"), holding the icon sizes,
// the Linux desktop entry and the packaging metadata; see build/README.md.
package buildassets

import _ "embed"

//go:embed icons/256x256.png
var appIcon []byte

// AppIcon returns the 256×256 PNG window icon (a copy, so callers cannot
// change the embedded bytes). Not the 1024×1024 appicon.png: X11 carries a
// window icon as 32-bit pixels in one property, and 4 MiB of it is too
// much for GDK to set.
func AppIcon() []byte { return append([]byte(nil), appIcon...) }

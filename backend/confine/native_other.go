//go:build !(linux && amd64)

package confine

// nativeELF is empty where no native launcher is built: launches use the
// re-executed Go launcher.
var nativeELF []byte

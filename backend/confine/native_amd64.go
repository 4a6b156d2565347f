//go:build linux && amd64

package confine

import _ "embed"

// nativeELF is launcher/launch.c built by launcher/build.sh (make launcher);
// TestEmbeddedLauncherIsBuiltFromSource checks it is that source's build.
//
//go:embed launcher/gatehouse-launch.amd64
var nativeELF []byte

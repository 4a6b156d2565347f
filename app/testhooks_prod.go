//go:build !e2e

package app

import (
	"flag"
	"time"
)

// testConsentWindow has no flag in production builds: the consent window
// is always the real five minutes.
func testConsentWindow(*flag.FlagSet) func() consentWindow {
	return func() consentWindow { return consentWindow{} }
}

// testMCPKeepAlive has no flag in production builds: the keep-alive
// interval is the default.
func testMCPKeepAlive(*flag.FlagSet) func() time.Duration {
	return func() time.Duration { return 0 }
}

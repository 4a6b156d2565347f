//go:build !e2e

package app

import "flag"

// testConsentWindow has no flag in production builds: the consent window
// is always the real five minutes.
func testConsentWindow(*flag.FlagSet) func() consentWindow {
	return func() consentWindow { return consentWindow{} }
}

//go:build e2e

package app

import (
	"flag"
	"time"

	"github.com/gatehouse/gatehouse/backend/consent"
)

// testConsentWindow adds --test-consent-window to end-to-end test builds
// (tag e2e) so a test can watch a proposal expire without waiting five
// minutes. Production builds never have this flag.
func testConsentWindow(fs *flag.FlagSet) func() consentWindow {
	d := fs.Duration("test-consent-window", 0, "TEST BUILD ONLY: shorten the consent window")
	return func() consentWindow {
		if *d <= 0 {
			return consentWindow{}
		}
		return consentWindow{clock: consent.ScaledClock(consent.SystemClock(), float64(consent.Window)/float64(*d))}
	}
}

// testMCPKeepAlive adds --test-mcp-keepalive to end-to-end test builds so a
// test can scale the wait for a person (keep-alive interval, client
// timeout and decision time together) instead of taking minutes.
func testMCPKeepAlive(fs *flag.FlagSet) func() time.Duration {
	d := fs.Duration("test-mcp-keepalive", 0, "TEST BUILD ONLY: the MCP keep-alive progress interval")
	return func() time.Duration { return *d }
}

package app

import (
	"os"
	"testing"

	"github.com/gatehouse/gatehouse/backend/confine"
)

// TestMain lets this test binary serve as the confinement launcher of the
// scripts its tests run in process, as the gatehouse binary does.
func TestMain(m *testing.M) {
	confine.MaybeLaunch()
	os.Exit(m.Run())
}

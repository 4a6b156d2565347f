package asciicast

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gatehouse/gatehouse/backend/capture"
	"github.com/gatehouse/gatehouse/backend/proctree"
)

// th is the renderer helper of this package's tests: the Node on PATH
// (standing for the pinned one) and the test binary's one supervisor,
// which realCapture shares.
var th capture.RendererHelper

func TestMain(m *testing.M) {
	node, err := exec.LookPath("node")
	if err != nil {
		fmt.Fprintln(os.Stderr, "asciicast tests need node on PATH (the renderer helper runs on it)")
		os.Exit(1)
	}
	node, _ = filepath.Abs(node)
	sup, err := proctree.NewSupervisor(proctree.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	th = capture.RendererHelper{Node: node, Supervisor: sup}
	code := m.Run()
	sup.Close()
	os.Exit(code)
}

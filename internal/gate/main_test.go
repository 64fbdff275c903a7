package gate

import (
	"os"
	"testing"

	runner "github.com/perfbot/perfbot/internal/run"
)

// TestMain lets the tests run commands: the supervisor of each run is this
// test binary executed again (see run.Main).
func TestMain(m *testing.M) {
	runner.Main()
	os.Exit(m.Run())
}

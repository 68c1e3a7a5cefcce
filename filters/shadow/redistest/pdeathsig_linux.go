package redistest

import (
	"os/exec"
	"syscall"
)

// setPdeathsig kills redis-server if the test binary dies without cleanup.
func setPdeathsig(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

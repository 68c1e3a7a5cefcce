//go:build !linux

package redistest

import "os/exec"

func setPdeathsig(*exec.Cmd) {}

package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel stop cmd when this process dies, so that a
// benchmark killed midway (a test's timeout) leaves no registry serve or
// search client behind, still crawling and loading the machine.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

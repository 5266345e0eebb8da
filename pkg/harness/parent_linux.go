package harness

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the plugin when the process that started it dies, as Grafana's plugins die
// with Grafana: a test binary killed by its timeout or by hand would otherwise leave its plugins running, serving
// and scraping, beside the next run.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

package lambdaemu

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// peakMemory is the process's peak resident set size in bytes (VmHWM in
// /proc/<pid>/status), which is what Lambda reports as "Max Memory Used";
// false where it cannot be read (not Linux, or the process is gone).
func (pr *proc) peakMemory() (int64, bool) {
	if pr.cmd == nil || pr.cmd.Process == nil {
		return 0, false
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pr.cmd.Process.Pid))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		if err != nil {
			return 0, false
		}
		return kb << 10, true
	}
	return 0, false
}

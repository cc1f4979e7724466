//go:build linux

package broker

import (
	"os"
	"strconv"

	"github.com/libtmux/libtmux-mcp/broker/peercred"
)

func init() { listGroup = procGroup }

// procGroup lists the live members of process group pgid from /proc, zombies left out.
func procGroup(pgid int) ([]string, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var members []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := peercred.ReadStat(pid)
		if err != nil || st.PGRP != pgid || st.State == 'Z' || st.State == 'X' {
			continue // gone since the listing, or not a member
		}
		members = append(members, strconv.Itoa(pid)+" "+st.Comm)
	}
	return members, nil
}

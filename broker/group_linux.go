//go:build linux

package broker

import "golang.org/x/sys/unix"

func init() { kill = unix.Kill }

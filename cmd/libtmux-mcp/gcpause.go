package main

import (
	"math"
	"runtime/debug"
	"sync"
	"time"
)

// gcPause is how long start-up runs without the garbage collector. Start-up
// allocates a few MB that stay live (the registered tools, their schemas
// parsed by go-sdk); collecting them while the client waits for its first
// answer cost about a quarter of the start-up time on two cores.
const gcPause = time.Second

// startupMemoryLimit bounds the heap while the collector is paused: past
// it, Go collects anyway.
const startupMemoryLimit = 64 << 20

// pauseGC turns the collector off under startupMemoryLimit and returns
// the function that restores both settings as they were (GOGC and
// GOMEMLIMIT are honoured); it may be called more than once.
func pauseGC() (resume func()) {
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(-1)
	if limit == math.MaxInt64 || limit > startupMemoryLimit {
		debug.SetMemoryLimit(startupMemoryLimit)
	}
	return sync.OnceFunc(func() {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(percent)
	})
}

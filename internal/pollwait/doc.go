// Package pollwait waits, in poll(2), until a descriptor is ready or a context ends: the
// broker's waits for a pidfd (the enrolled shell exited) and for a liveness FIFO (its writers
// closed) are this one wait. A cancel wakes the poll at once, through an eventfd that a
// context.AfterFunc writes, rather than at the next slice of a polling loop; the blocked poll
// holds one OS thread for as long as it waits. Linux only: elsewhere Ready answers
// ErrNotSupported.
package pollwait

import "errors"

// ErrNotSupported is Ready's answer off Linux.
var ErrNotSupported = errors.New("pollwait: not supported on this platform")

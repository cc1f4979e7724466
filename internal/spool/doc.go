// Package spool keeps one output stream (stdout or stderr) of a background
// run in a private file, within a bound. The first half of the bound holds
// the stream's first bytes as written (the head); the second half is a ring
// holding its newest bytes (the tail). The bytes between are dropped and
// counted exactly, because a background run's output is never a reason to
// stop it, and a reader is owed the beginning, the end, and the size of
// what it will not see.
//
// One goroutine writes a File while others read it: Read returns the
// stream from an offset within a byte budget, again as a head, a tail and
// an exact count of what lies in neither, never cutting a UTF-8 sequence
// in two.
//
// The package keeps bytes; it does not know about processes, exit status
// or tools, and it does not make the private directory the file lives in.
package spool

//go:build !linux

package pollwait

import "context"

// Ready answers ErrNotSupported off Linux.
func Ready(context.Context, int) error { return ErrNotSupported }

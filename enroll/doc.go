// Package enroll keeps the invitations and enrollments of tmux_run: which
// panes a person was invited to enroll, the single-use tokens bound to each
// pane and server, their expiry, the enrollments that sourcing a setup file
// produced, and the generations (server, enrollment, process) a run is
// authorized against.
//
// It does not speak the shell protocol or run anything; package broker does.
package enroll

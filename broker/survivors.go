package broker

import (
	"fmt"
	"strings"
)

// Survivors are the processes a script left running in its process group after its shell
// ended: background jobs (`sleep 60 &`, `sh -c '…' &`, a double-forked nohup job). A process
// that left the group (setsid, setpgid) is not counted: nothing ties it to the script any more.
type Survivors struct {
	Count int
	Some  []string // the first maxSurvivorNames, as "pid name"
}

// maxSurvivorNames bounds the survivors named in an answer.
const maxSurvivorNames = 5

// listGroup lists the live members of process group pgid as "pid name"; survivors_linux.go
// fills it, and elsewhere it stays nil (survivors are then not reported).
var listGroup func(pgid int) ([]string, error)

// survivorsOf reports the live members left in the script's group pgid, or nil when that
// cannot be told. An empty group costs one kill(2); only a group with members is listed.
func survivorsOf(pgid int) *Survivors {
	if pgid < 2 || listGroup == nil {
		return nil
	}
	if signalGroup(pgid, 0) != nil {
		return &Survivors{}
	}
	members, err := listGroup(pgid)
	if err != nil {
		return nil
	}
	return &Survivors{Count: len(members), Some: members[:min(len(members), maxSurvivorNames)]}
}

// String says what is left, for an answer.
func (s *Survivors) String() string {
	if s.Count == 0 {
		return "no process of the script's process group is left running"
	}
	more := ""
	if s.Count > len(s.Some) {
		more = fmt.Sprintf(" and %d more", s.Count-len(s.Some))
	}
	return fmt.Sprintf("%d process(es) the script started are still running in its process group (%s%s); stop them with kill -TERM -- -PGID if they should not outlive it", s.Count, strings.Join(s.Some, ", "), more)
}

// Notifications of a control connection, fanned out to subscribers.

package tmux

import (
	"sync"
)

// subscriber is one consumer of events. Its channel has one slot more than
// asked for, kept for the EventLost marker.
type subscriber struct {
	ch     chan Event
	size   int
	output bool // the panes' output is sent too
	lost   int  // dropped since the last marker was queued; under smu
}

// Subscribe returns a channel of every notification, in tmux's order, and a
// function that ends the subscription (closing the channel). The channel is
// closed when the connection ends. The reader never waits for a consumer:
// when buf events are queued, later ones are dropped and one EventLost
// marker (with the count) is queued behind them, so a consumer that falls
// behind always learns it, and re-reads what it needs from tmux.
func (cc *Control) Subscribe(buf int) (<-chan Event, func()) {
	return cc.subscribe(buf, true)
}

// SubscribeNotices is Subscribe without the panes' output (%output and
// %extended-output, which OnOutput's function still gets): for a consumer
// that wakes on the other notifications, it saves a send and a wake-up for
// every block a pane prints.
func (cc *Control) SubscribeNotices(buf int) (<-chan Event, func()) {
	return cc.subscribe(buf, false)
}

func (cc *Control) subscribe(buf int, output bool) (<-chan Event, func()) {
	if buf < 1 {
		buf = 1
	}
	s := &subscriber{ch: make(chan Event, buf+1), size: buf, output: output}
	cc.smu.Lock()
	if cc.subsClosed {
		close(s.ch)
	} else {
		cc.subs[s] = struct{}{}
		if output {
			cc.outputSubs.Add(1)
		}
	}
	cc.smu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			cc.smu.Lock()
			defer cc.smu.Unlock()
			if _, ok := cc.subs[s]; ok {
				delete(cc.subs, s)
				if output {
					cc.outputSubs.Add(-1)
				}
				close(s.ch)
			}
		})
	}
}

// publish hands ev to every subscriber without blocking. Only the reader
// sends, so a length check followed by a send cannot block.
func (cc *Control) publish(ev Event) {
	output := ev.Kind == EventOutput || ev.Kind == EventExtendedOutput
	if output && cc.outputSubs.Load() == 0 {
		return
	}
	cc.smu.Lock()
	defer cc.smu.Unlock()
	for s := range cc.subs {
		if output && !s.output {
			continue
		}
		switch n := len(s.ch); {
		case n < s.size:
			s.ch <- ev
		case n == s.size:
			// The spare slot is free: queue the marker. Every dropped event
			// is followed in the channel by a marker not yet read.
			s.lost++
			s.ch <- Event{Kind: EventLost, Lost: s.lost}
			s.lost = 0
		default:
			s.lost++
		}
	}
}

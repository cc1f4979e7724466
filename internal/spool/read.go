package spool

import (
	"fmt"
	"unicode/utf8"
)

// Part is what Read returns of the stream from an offset.
type Part struct {
	Head    []byte // the first kept bytes from the offset on
	Tail    []byte // the newest bytes, when something between was left out; else empty
	Dropped int64  // bytes of [from, Next) in neither Head nor Tail: dropped by the bound, or left out for the budget
	Next    int64  // Total when read: where the next Read starts
	Err     error  // the first write error, if any (what is returned was still read)
}

// Read returns the stream from offset from (0 <= from <= Total, else an error naming the range)
// within budget bytes of Head+Tail (budget <= 0: an error). When all kept bytes of [from, Total)
// fit and none were dropped, they are all in Head and Tail is empty. Otherwise Head holds the first
// kept bytes from `from` on (at most half the budget) and Tail the newest bytes (the rest of the
// budget), and Dropped counts exactly what is in neither. Cuts never split a UTF-8 sequence when the
// bytes around the cut are valid UTF-8 (move the cut by at most 3 bytes, into Dropped); invariant:
// len(Head) + len(Tail) + Dropped == Next - from, always.
//
// Head and Tail are each a run of consecutive stream bytes, and Tail
// ends with the newest kept byte. When the kept bytes from `from` on are
// one such run (the offset lies in the dropped middle, or a write error
// ended what was kept) and it fits the budget, it is all in Head.
func (f *File) Read(from int64, budget int) (Part, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.removed {
		return Part{}, f.removedError()
	}
	if from < 0 || from > f.total {
		return Part{}, fmt.Errorf("spool: read from byte %d: outside [0, %d], the stream so far", from, f.total)
	}
	if budget <= 0 {
		return Part{}, fmt.Errorf("spool: read budget %d: it must be at least 1 byte", budget)
	}
	p := Part{Next: f.total, Err: f.err}
	runs, err := f.keptRuns(from)
	if err != nil {
		return Part{}, err
	}
	switch {
	case len(runs) == 0:
	case len(runs) == 1 && runs[0].len() <= int64(budget):
		if p.Head, err = f.readStream(runs[0]); err != nil {
			return Part{}, err
		}
	default:
		first, last := runs[0], runs[len(runs)-1]
		head := span{first.from, first.from + min(first.len(), int64(budget/2))}
		if p.Head, err = f.readStream(head); err != nil {
			return Part{}, err
		}
		if head.to < first.to {
			p.Head = p.Head[:len(p.Head)-incompleteEnd(p.Head)]
		}
		tail := span{last.to - min(last.len(), int64(budget-len(p.Head))), last.to}
		if p.Tail, err = f.readStream(tail); err != nil {
			return Part{}, err
		}
		if tail.from > last.from {
			p.Tail = p.Tail[strayStart(p.Tail):]
		}
	}
	p.Dropped = f.total - from - int64(len(p.Head)) - int64(len(p.Tail))
	return p, nil
}

// span is the stream bytes [from, to).
type span struct{ from, to int64 }

func (s span) len() int64 { return s.to - s.from }

// keptRuns returns the kept bytes of [from, total) as runs of
// consecutive stream bytes, oldest first: none, one, or two with dropped
// bytes between. A run's ends that meet dropped bytes (other than at
// from) are moved so as not to split a UTF-8 sequence.
func (f *File) keptRuns(from int64) ([]span, error) {
	var runs []span
	for _, s := range []span{{0, f.headLen}, {f.ringFrom, f.ringTo}} {
		s.from = max(s.from, from)
		if s.len() <= 0 {
			continue
		}
		if n := len(runs); n > 0 && runs[n-1].to == s.from {
			runs[n-1].to = s.to
		} else {
			runs = append(runs, s)
		}
	}
	kept := runs[:0]
	for _, s := range runs {
		if s.from > from {
			b, err := f.readStream(span{s.from, s.from + min(s.len(), utf8.UTFMax)})
			if err != nil {
				return nil, err
			}
			s.from += int64(strayStart(b))
		}
		if s.to < f.total && s.len() > 0 {
			b, err := f.readStream(span{s.to - min(s.len(), utf8.UTFMax-1), s.to})
			if err != nil {
				return nil, err
			}
			s.to -= int64(incompleteEnd(b))
		}
		if s.len() > 0 {
			kept = append(kept, s)
		}
	}
	return kept, nil
}

// readStream reads the stream bytes of s, which must be kept, from the
// head region and the ring.
func (f *File) readStream(s span) ([]byte, error) {
	b := make([]byte, s.len())
	for pos := s.from; pos < s.to; {
		off, n := pos, min(s.to-pos, f.head-pos)
		if pos >= f.head {
			slot := (pos - f.head) % f.ring
			off, n = f.head+slot, min(s.to-pos, f.ring-slot)
		}
		if _, err := f.file.ReadAt(b[pos-s.from:pos-s.from+n], off); err != nil {
			return nil, fmt.Errorf("spool: read stream bytes [%d, %d): %w", s.from, s.to, err)
		}
		pos += n
	}
	return b, nil
}

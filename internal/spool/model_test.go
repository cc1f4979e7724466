package spool

import (
	"math/rand/v2"
	"testing"
)

// model is what Read(from, budget) returns of stream from a File bounded
// by bound, worked out from the whole stream held in memory: a byte is
// kept when it is among the first bound/2 or the last bound-bound/2.
func model(stream []byte, bound, from int64, budget int) Part {
	head := bound / 2
	total := int64(len(stream))
	tailFrom := max(head, total-(bound-head))
	var runs [][2]int64 // kept [from, to), oldest first
	for i := from; i < total; i++ {
		if i >= head && i < tailFrom {
			continue
		}
		if n := len(runs); n > 0 && runs[n-1][1] == i {
			runs[n-1][1]++
		} else {
			runs = append(runs, [2]int64{i, i + 1})
		}
	}
	// Where a run meets dropped bytes, it gives up a split rune.
	kept := runs[:0]
	for _, r := range runs {
		if r[0] > from {
			r[0] += int64(strayStart(stream[r[0]:r[1]]))
		}
		if r[1] < total {
			r[1] -= int64(incompleteEnd(stream[r[0]:r[1]]))
		}
		if r[1] > r[0] {
			kept = append(kept, r)
		}
	}
	p := Part{Next: total}
	switch {
	case len(kept) == 0:
	case len(kept) == 1 && kept[0][1]-kept[0][0] <= int64(budget):
		p.Head = stream[kept[0][0]:kept[0][1]]
	default:
		first, last := kept[0], kept[len(kept)-1]
		headTo := first[0] + min(first[1]-first[0], int64(budget/2))
		p.Head = stream[first[0]:headTo]
		if headTo < first[1] {
			p.Head = p.Head[:len(p.Head)-incompleteEnd(p.Head)]
		}
		tailFrom := last[1] - min(last[1]-last[0], int64(budget-len(p.Head)))
		p.Tail = stream[tailFrom:last[1]]
		if tailFrom > last[0] {
			p.Tail = p.Tail[strayStart(p.Tail):]
		}
	}
	p.Dropped = total - from - int64(len(p.Head)) - int64(len(p.Tail))
	return p
}

// pieces cuts stream into writes of the sizes given, cycling through
// them; a size of 0 is an empty write.
func pieces(stream []byte, sizes []int) [][]byte {
	var out [][]byte
	for i := 0; len(stream) > 0; i++ {
		n := min(sizes[i%len(sizes)], len(stream))
		out = append(out, stream[:n])
		stream = stream[n:]
	}
	return out
}

// TestReadMatchesModel writes streams shorter than the bound, exactly it,
// just past it and many times past it, in small and large writes, and
// compares every Read with the model: from every offset with every budget
// up to past what is kept, for small bounds.
func TestReadMatchesModel(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 2000)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	for _, bound := range []int64{1, 2, 3, 10, 11} {
		for _, length := range []int64{0, bound - 1, bound, bound + 1, 3*bound + 2, 10*bound + 7} {
			for _, sizes := range [][]int{{1}, {3}, {int(length)}, {1, int(2*bound + 3)}, {0, 2, int(bound)}} {
				if length < 0 || sizes[0] == 0 && len(sizes) == 1 {
					continue
				}
				stream := random[:length]
				f := newFile(t, bound)
				for _, p := range pieces(stream, sizes) {
					write(t, f, p)
					total := f.Total()
					samePart(t, "after a write", read(t, f, total/2, 3), model(stream[:total], bound, total/2, 3))
				}
				for from := int64(0); from <= length; from++ {
					for budget := 1; budget <= int(bound)+3; budget++ {
						got := read(t, f, from, budget)
						samePart(t, "", got, model(stream, bound, from, budget))
					}
				}
			}
		}
	}
}

// FuzzRead writes a stream in pieces to a small bound, reading after
// every write, and compares each Read with the model.
func FuzzRead(f *testing.F) {
	f.Add(uint8(10), []byte("abcdefghijklmnopqrstuvwxyz"), []byte{1, 3, 30}, uint16(3), uint16(4))
	f.Add(uint8(7), []byte("é日本é日本é日本aé"), []byte{2, 5}, uint16(0), uint16(5))
	f.Add(uint8(1), []byte("xyz"), []byte{0, 1}, uint16(1), uint16(1))
	f.Fuzz(func(t *testing.T, bound uint8, stream, sizes []byte, from, budget uint16) {
		b := int64(bound%64) + 1
		ns := []int{len(stream)}
		if len(sizes) > 0 {
			ns = ns[:0]
			for _, s := range sizes {
				ns = append(ns, int(s))
			}
			ns[0] = max(ns[0], 1) // some piece must make progress
		}
		file := newFile(t, b)
		for _, p := range pieces(stream, ns) {
			write(t, file, p)
			total := file.Total()
			at := int64(from) % (total + 1)
			got := read(t, file, at, int(budget)%(int(b)+8)+1)
			samePart(t, "", got, model(stream[:total], b, at, int(budget)%(int(b)+8)+1))
		}
	})
}

package live

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkLinesFeed feeds the output of `seq 1 2000` as a terminal shows
// it (CR LF line ends), in the 1 KiB pieces tmux relays it in.
//
//	go test ./live -run '^$' -bench LinesFeed -benchmem
func BenchmarkLinesFeed(b *testing.B) {
	var out strings.Builder
	for i := 1; i <= 2000; i++ {
		fmt.Fprintf(&out, "%d\r\n", i)
	}
	data := []byte(out.String())
	b.SetBytes(int64(len(data)))
	l := NewLines(2000, 1<<20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for at := 0; at < len(data); at += 1024 {
			l.Feed(data[at:min(at+1024, len(data))])
		}
	}
}

package wal

import (
	"fmt"
	"sync"
	"testing"
)

// BenchmarkGroupCommit: writers append a record of n floats and wait for
// it to be durable, concurrently; records/fsync shows how many share one.
//
//	go test ./wal -run '^$' -bench GroupCommit
func BenchmarkGroupCommit(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		for _, writers := range []int{1, 4, 16} {
			b.Run(fmt.Sprintf("floats=%d/writers=%d", n, writers), func(b *testing.B) {
				l, err := Start(b.TempDir(), Options{MaxFloats: n})
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				rec := &Record{Kind: KindPush, Floats: make([]float32, n)}
				b.SetBytes(int64(rec.size()))
				var wg sync.WaitGroup
				per := (b.N + writers - 1) / writers
				b.ResetTimer()
				for w := 0; w < writers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < per; i++ {
							lsn, err := l.Append(rec)
							if err == nil {
								err = l.Sync(lsn)
							}
							if err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				st := l.Stats()
				b.ReportMetric(float64(st.Records)/float64(max(1, st.Syncs)), "records/fsync")
			})
		}
	}
}

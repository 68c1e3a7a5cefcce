package shadow

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/shadow/redistest"
	"github.com/toolproc/toolproc/filters/wire"
	"github.com/toolproc/toolproc/filters/wire/wiretest"
)

const benchKeys = 1024

var benchValue = bytes.Repeat([]byte("0123456789abcdef"), 512) // 8 KB

func benchIDs() []string {
	ids := make([]string, benchKeys)
	for i := range ids {
		ids[i] = ID(testTenants[0], fmt.Appendf(nil, "result %d", i))
	}
	return ids
}

func benchPut(b *testing.B, s Store) {
	ctx := context.Background()
	ids := benchIDs()
	b.SetBytes(int64(len(benchValue)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := s.Put(ctx, testTenants[0], Original, ids[i%benchKeys], benchValue); err != nil {
			b.Fatal(err)
		}
	}
}

func benchGet(b *testing.B, s Store) {
	ctx := context.Background()
	ids := benchIDs()
	for _, id := range ids {
		if err := s.Put(ctx, testTenants[0], Original, id, benchValue); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(benchValue)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := s.Get(ctx, testTenants[0], Original, ids[i%benchKeys]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMemoryPut(b *testing.B) { benchPut(b, NewMemory(MemoryOptions{})) }
func BenchmarkMemoryGet(b *testing.B) { benchGet(b, NewMemory(MemoryOptions{})) }

func BenchmarkMemoryGetParallel(b *testing.B) {
	m := NewMemory(MemoryOptions{})
	ctx := context.Background()
	ids := benchIDs()
	for _, id := range ids {
		_ = m.Put(ctx, testTenants[0], Original, id, benchValue)
	}
	b.SetBytes(int64(len(benchValue)))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			if _, err := m.Get(ctx, testTenants[0], Original, ids[i%benchKeys]); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkMemoryPutEvicting runs with a cap of 64 entries, so every Put
// also evicts one.
func BenchmarkMemoryPutEvicting(b *testing.B) {
	benchPut(b, NewMemory(MemoryOptions{MaxBytes: 64 * int64(len(benchValue)+100)}))
}

func BenchmarkRedisPut(b *testing.B) {
	srv := redistest.Start(b)
	benchPut(b, newTestRedis(b, RedisOptions{Addr: srv.Addr()}))
}

func BenchmarkRedisGet(b *testing.B) {
	srv := redistest.Start(b)
	benchGet(b, newTestRedis(b, RedisOptions{Addr: srv.Addr()}))
}

func BenchmarkID(b *testing.B) {
	b.SetBytes(int64(len(benchValue)))
	b.ReportAllocs()
	for b.Loop() {
		_ = ID(testTenants[0], benchValue)
	}
}

func BenchmarkCacheKey(b *testing.B) {
	b.SetBytes(int64(len(benchValue)))
	b.ReportAllocs()
	for b.Loop() {
		_ = CacheKey(benchValue, "local budget=4096")
	}
}

func BenchmarkTenant(b *testing.B) {
	h := map[string]string{"authorization": "Bearer sk-proj-0123456789abcdef0123456789abcdef", "content-type": "application/json"}
	b.ReportAllocs()
	for b.Loop() {
		_ = Tenant(h, "")
	}
}

func BenchmarkFindIDs(b *testing.B) {
	// A 64 KB request body with four references.
	var sb strings.Builder
	for i := range 4 {
		sb.WriteString(Reference(ID("t", []byte{byte(i)}), 50000, ""))
		sb.WriteString(strings.Repeat("compressed text line with sh_ like words\n", 400))
	}
	text := sb.String()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if len(FindIDs(text)) != 4 {
			b.Fatal("ids")
		}
	}
}

// BenchmarkCompressFilter is the request step over a ~1 MB OpenAI Chat body
// with 20 test-log results of ~50 KB each: cold (every result compressed
// and both kinds stored) and warm (the next turn: cache hits, originals
// touched), with the memory store and with a real Redis.
func BenchmarkCompressFilter(b *testing.B) {
	results := make([]string, 20)
	for i := range results {
		results[i] = testLog(900 + i)
	}
	body := wiretest.Request(wire.OpenAIChat, results...)
	stores := []struct {
		name string
		open func(b *testing.B) Store
	}{
		{"memory", func(*testing.B) Store { return NewMemory(MemoryOptions{}) }},
		{"redis", func(b *testing.B) Store {
			srv := redistest.Start(b)
			return newTestRedis(b, RedisOptions{Addr: srv.Addr()})
		}},
	}
	for _, st := range stores {
		for _, warm := range []bool{false, true} {
			name := st.name + "/cold"
			if warm {
				name = st.name + "/warm"
			}
			b.Run(name, func(b *testing.B) {
				store := st.open(b)
				n := 0
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					tenant := "bench"
					if !warm {
						n++
						tenant = fmt.Sprintf("bench-%d", n) // a new tenant: nothing cached
					}
					f := NewCompressFilter(defaultOpts(), Env{Store: store, Tenant: tenant})
					if _, rep, err := pipeline.New(f).Run(wire.OpenAIChat, body); err != nil || len(rep.Changes) != len(results) {
						b.Fatalf("err %v, %d changes", err, len(rep.Changes))
					}
				}
			})
		}
	}
}

// Command clientgo-queue-bench runs the seed-003 concurrency scenario on client-go's work queue
// and prints one JSON line: {"wall_s":..,"reconciles":..,"overlaps":..,"stale_keys":..}.
// With -warmup N (default 3) it first runs the scenario N times untimed, as the TypeScript side
// does to let V8 compile its hot path.
//
// A producer adds keys chosen by a seeded xorshift32 sequence (the same sequence as the
// TypeScript benchmark) and calls runtime.Gosched() after every -adds-per-yield adds; each of
// -workers goroutines loops Get -> reconcile (one runtime.Gosched() while holding the key) ->
// Done. An overlap detector counts reconciles that start while another worker holds the key;
// stale_keys counts keys whose last add was not followed by a reconcile.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
)

type queue interface {
	Add(string)
	Get() (string, bool)
	Done(string)
	ShutDown()
}

// channelQueue is a plain buffered channel: no dirty or processing set.
type channelQueue struct{ ch chan string }

func (c channelQueue) Add(k string) { c.ch <- k }
func (c channelQueue) Get() (string, bool) {
	k, ok := <-c.ch
	return k, !ok
}
func (c channelQueue) Done(string) {}
func (c channelQueue) ShutDown()   { close(c.ch) }

// keySequence returns n key indexes in [0, keys) from xorshift32 seeded with seed.
func keySequence(n, keys int, seed uint32) []int {
	seq := make([]int, n)
	x := seed
	for i := range seq {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		seq[i] = int(x % uint32(keys))
	}
	return seq
}

type result struct {
	WallS      float64 `json:"wall_s"`
	Reconciles int64   `json:"reconciles"`
	Overlaps   int64   `json:"overlaps"`
	StaleKeys  int64   `json:"stale_keys"`
}

type scenario struct {
	workers, keys, adds, addsPerYield int
	seed                              uint32
	kind                              string
}

func newQueue(kind string, capacity int) (queue, error) {
	switch kind {
	case "workqueue":
		return workqueue.NewTyped[string](), nil
	case "channel":
		return channelQueue{ch: make(chan string, capacity)}, nil
	}
	return nil, fmt.Errorf("unknown -queue %q", kind)
}

// run executes the scenario once on a fresh queue; wall time runs from the first add until
// every worker has stopped.
func run(s scenario) (result, error) {
	q, err := newQueue(s.kind, s.adds)
	if err != nil {
		return result{}, err
	}
	names := make([]string, s.keys)
	index := make(map[string]int, s.keys)
	for i := range names {
		names[i] = fmt.Sprintf("default/object-%d", i)
		index[names[i]] = i
	}
	seq := keySequence(s.adds, s.keys, s.seed)

	holders := make([]atomic.Int32, s.keys)
	lastAdd := make([]atomic.Int64, s.keys)
	lastStart := make([]atomic.Int64, s.keys)
	for i := range lastStart {
		lastStart[i].Store(-1)
	}
	var added, reconciles, overlaps atomic.Int64

	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < s.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				k := index[key]
				reconciles.Add(1)
				lastStart[k].Store(added.Load())
				if holders[k].Add(1) != 1 {
					overlaps.Add(1)
				}
				runtime.Gosched()
				holders[k].Add(-1)
				q.Done(key)
			}
		}()
	}
	for i, k := range seq {
		lastAdd[k].Store(int64(i + 1))
		added.Store(int64(i + 1))
		q.Add(names[k])
		if s.addsPerYield > 0 && (i+1)%s.addsPerYield == 0 {
			runtime.Gosched()
		}
	}
	q.ShutDown()
	wg.Wait()
	wall := time.Since(start)

	var stale int64
	for k := range lastAdd {
		if lastStart[k].Load() < lastAdd[k].Load() {
			stale++
		}
	}
	return result{WallS: wall.Seconds(), Reconciles: reconciles.Load(), Overlaps: overlaps.Load(), StaleKeys: stale}, nil
}

func main() {
	workers := flag.Int("workers", 16, "concurrent workers")
	keys := flag.Int("keys", 64, "distinct keys")
	adds := flag.Int("adds", 320_000, "total adds")
	addsPerYield := flag.Int("adds-per-yield", 32, "producer yields after this many adds (0: never)")
	seed := flag.Uint("seed", 0x9e3779b9, "xorshift32 seed of the key order")
	kind := flag.String("queue", "workqueue", "workqueue or channel")
	warmup := flag.Int("warmup", 3, "untimed runs before the measured one")
	flag.Parse()

	s := scenario{workers: *workers, keys: *keys, adds: *adds, addsPerYield: *addsPerYield, seed: uint32(*seed), kind: *kind}
	for i := 0; i < *warmup; i++ {
		if _, err := run(s); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	r, err := run(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

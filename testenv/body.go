package testenv

import (
	"io"
	"net/http"
	"sync"
)

// streamBody is the body of the upstream request: the exchange pushes chunks as the filter releases
// them and never blocks, so a slow or early-answering upstream cannot stall the event loop.
type streamBody struct {
	mu       sync.Mutex
	cond     *sync.Cond
	bufs     [][]byte
	eof      bool
	err      error
	trailers *headerMap  // trailer values, copied into trailer by the reader just before EOF
	trailer  http.Header // the outgoing request's Trailer map
}

func newStreamBody(trailer http.Header) *streamBody {
	b := &streamBody{trailer: trailer}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *streamBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.bufs) == 0 && !b.eof && b.err == nil {
		b.cond.Wait()
	}
	if b.err != nil {
		return 0, b.err
	}
	if len(b.bufs) > 0 {
		n := copy(p, b.bufs[0])
		if n == len(b.bufs[0]) {
			b.bufs = b.bufs[1:]
		} else {
			b.bufs[0] = b.bufs[0][n:]
		}
		return n, nil
	}
	// net/http reads the Trailer map in the goroutine that reads the body, once it sees EOF, and
	// iterates it when the request starts; filling it here, on that goroutine, races with neither.
	if b.trailers != nil && b.trailer != nil {
		for _, e := range b.trailers.entries {
			if _, announced := b.trailer[http.CanonicalHeaderKey(e.key)]; announced {
				b.trailer.Add(e.key, e.value)
			}
		}
		b.trailers = nil
	}
	return 0, io.EOF
}

// push queues data for the upstream.
func (b *streamBody) push(data []byte) {
	if len(data) == 0 {
		return
	}
	b.mu.Lock()
	b.bufs = append(b.bufs, data)
	b.mu.Unlock()
	b.cond.Broadcast()
}

// finish ends the body. Trailers, if any, are sent after it; only names the client announced can go
// out over HTTP/1.1, because net/http announces them before the body.
func (b *streamBody) finish(trailers *headerMap) {
	b.mu.Lock()
	b.trailers = trailers
	b.eof = true
	b.mu.Unlock()
	b.cond.Broadcast()
}

// abort makes pending and future reads fail.
func (b *streamBody) abort(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
	b.cond.Broadcast()
}

// Close is called by net/http when it is done with the body.
func (b *streamBody) Close() error {
	b.abort(io.ErrClosedPipe)
	return nil
}

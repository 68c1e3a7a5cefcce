package testenv

import (
	"hash/fnv"
	"math/rand/v2"
)

// Chunker splits a body into the data chunks Envoy would hand the filter. A trailing empty chunk means
// "end the stream with an empty data frame", as an HTTP/1 chunked terminator or an HTTP/2 empty
// END_STREAM frame does (§3.2). Empty chunks anywhere else are dropped.
//
// Request bodies are split whole (or per client read with StreamRequestBody). Response bodies are split
// per upstream read so the client keeps seeing bytes as soon as the upstream sends them; chunk boundaries
// in Envoy also come from socket reads (§12.4), so this is the realistic shape.
type Chunker func(body []byte) [][]byte

// FixedChunks cuts a body into n-byte chunks (the last may be shorter). n < 1 means one chunk.
func FixedChunks(n int) Chunker {
	return func(body []byte) [][]byte {
		if len(body) == 0 {
			return nil
		}
		if n < 1 {
			return [][]byte{body}
		}
		out := make([][]byte, 0, (len(body)+n-1)/n)
		for len(body) > n {
			out = append(out, body[:n:n])
			body = body[n:]
		}
		return append(out, body)
	}
}

// RandomChunks cuts a body into pseudo-random sizes between 1 and max. The sizes depend only on seed,
// so a failing split is reproducible; small maxima put boundaries inside SSE events, between \r and \n,
// and inside UTF-8 runes.
func RandomChunks(seed int64, max int) Chunker {
	if max < 1 {
		max = 1
	}
	return func(body []byte) [][]byte {
		rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
		return randomSplit(rng, body, max)
	}
}

func randomSplit(rng *rand.Rand, body []byte, max int) [][]byte {
	if len(body) == 0 {
		return nil
	}
	var out [][]byte
	for len(body) > 0 {
		n := 1 + rng.IntN(max)
		if n > len(body) {
			n = len(body)
		}
		out = append(out, body[:n:n])
		body = body[n:]
	}
	return out
}

// defaultChunkMax is the largest chunk the default chunker produces. Real observed sizes go from a few
// bytes to far more (§12.4); 16 KiB keeps typical LLM requests in a handful of chunks.
const defaultChunkMax = 16 << 10

// defaultChunker is used when a ProxyConfig chunker is nil: sizes up to 16 KiB, seeded by the body so a
// given payload always splits the same way, and about one body in three ends with an empty chunk.
func defaultChunker(body []byte) [][]byte {
	if len(body) == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(bodySeed(body), uint64(len(body))))
	out := randomSplit(rng, body, defaultChunkMax)
	if rng.IntN(3) == 0 {
		out = append(out, []byte{})
	}
	return out
}

// chunkPiece is one data chunk ready for the filter.
type chunkPiece struct {
	data []byte
	eos  bool
}

// splitForFilter applies a chunker to one piece of body. If last is set the final chunk carries
// end_of_stream, or a trailing empty chunk does when the chunker asks for one. Empty chunks elsewhere
// are dropped; an empty last piece still yields one empty end_of_stream chunk.
func splitForFilter(c Chunker, data []byte, last bool) []chunkPiece {
	parts := c(data)
	var out []chunkPiece
	for i, p := range parts {
		trailingEmpty := len(p) == 0 && i == len(parts)-1
		if len(p) == 0 && !(trailingEmpty && last) {
			continue
		}
		out = append(out, chunkPiece{data: p})
	}
	if last {
		if len(out) == 0 {
			out = append(out, chunkPiece{data: []byte{}})
		}
		out[len(out)-1].eos = true
	}
	return out
}

// bodySeed is a hash of the body's ends and length: enough for a given
// payload to split the same way every time, without reading a whole 1 MB
// body byte by byte for it (FNV over all of it was a fifth of the
// stand-in's CPU per request).
func bodySeed(body []byte) uint64 {
	const sample = 4 << 10
	h := fnv.New64a()
	if len(body) <= 2*sample {
		_, _ = h.Write(body)
	} else {
		_, _ = h.Write(body[:sample])
		_, _ = h.Write(body[len(body)-sample:])
	}
	return h.Sum64()
}

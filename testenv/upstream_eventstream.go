package testenv

import (
	"encoding/binary"
	"hash/crc32"
	"net/http"
)

// EventStreamFrame encodes one AWS event-stream message with the string
// headers Bedrock sends (:event-type, :content-type, :message-type): a
// 12-byte prelude (total length, headers length, CRC32 of the two), the
// headers, the payload and a CRC32 of everything before it
// (https://docs.aws.amazon.com/AmazonS3/latest/API/RESTSelectObjectAppendix.html).
func EventStreamFrame(eventType string, payload []byte) []byte {
	var h []byte
	for _, kv := range [][2]string{{":event-type", eventType}, {":content-type", "application/json"}, {":message-type", "event"}} {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, 7) // value type 7: string
		h = binary.BigEndian.AppendUint16(h, uint16(len(kv[1])))
		h = append(h, kv[1]...)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(16+len(h)+len(payload)))
	out = binary.BigEndian.AppendUint32(out, uint32(len(h)))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
	out = append(append(out, h...), payload...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

// BedrockStream is a ConverseStream answer carrying text and billing b in
// its metadata event, one frame per chunk
// (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html).
func BedrockStream(text string, b Bill) *ScriptedResponse {
	usage := mustJSON(map[string]any{
		"usage": map[string]int64{"inputTokens": b.Input, "outputTokens": b.Output, "totalTokens": b.Prompt() + b.Output,
			"cacheReadInputTokens": b.CacheRead, "cacheWriteInputTokens": b.CacheWrite},
		"metrics": map[string]int{"latencyMs": 120},
	})
	return &ScriptedResponse{
		Status: http.StatusOK,
		Header: http.Header{"Content-Type": {"application/vnd.amazon.eventstream"}},
		Chunks: [][]byte{
			EventStreamFrame("messageStart", []byte(`{"role":"assistant"}`)),
			EventStreamFrame("contentBlockDelta", mustJSON(map[string]any{"contentBlockIndex": 0, "delta": map[string]string{"text": text}})),
			EventStreamFrame("contentBlockStop", []byte(`{"contentBlockIndex":0}`)),
			EventStreamFrame("messageStop", []byte(`{"stopReason":"end_turn"}`)),
			EventStreamFrame("metadata", usage),
		},
	}
}

package extproc

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	extprocv3 "github.com/envoyproxy/go-control-plane/envoy/service/ext_proc/v3"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/tidwall/gjson"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// startGRPC serves s on a loopback port and returns a connected client.
func startGRPC(t testing.TB, s *Server) extprocv3.ExternalProcessorClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(GRPCServerOptions(s.cfg)...)
	s.Register(g)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return extprocv3.NewExternalProcessorClient(conn)
}

// TestProcessCanonicalSequence drives the sequence of docs/envoy-notes.md §3.4
// over a real gRPC stream, with a body larger than grpc-go's 4 MiB default.
func TestProcessCanonicalSequence(t *testing.T) {
	s := testServer(t, clampOnly)
	client := startGRPC(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, ProfileMetadataKey, "default")
	stream, err := client.Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat(bigToolOutput(), 20) // ~6 MB result
	body := openAIBody(big)
	steps := []*extprocv3.ProcessingRequest{
		reqHeaders("/v1/chat/completions", modeBuffered, modeStreamed),
		reqBody(body, true),
		{Request: &extprocv3.ProcessingRequest_ResponseHeaders{ResponseHeaders: hdrs(":status", "200", "content-type", "text/event-stream")}},
		respBody([]byte("data: {}\n\n"), false),
		respBody(nil, true),
	}
	var got []*extprocv3.ProcessingResponse
	for _, m := range steps {
		if err := stream.Send(m); err != nil {
			t.Fatal(err)
		}
		r, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if got[0].GetRequestHeaders() == nil || got[2].GetResponseHeaders() == nil || got[3].GetResponseBody() == nil || got[4].GetResponseBody() == nil {
		t.Fatalf("answers out of order: %v", got)
	}
	out := got[1].GetRequestBody().GetResponse().GetBodyMutation().GetBody()
	if len(out) == 0 || len(out) > 60000 || !gjson.ValidBytes(out) {
		t.Fatalf("body not clamped: %d bytes", len(out))
	}
	md := got[1].GetDynamicMetadata().GetFields()["toolproc"].GetStructValue().GetFields()
	if md["bytes_in"].GetNumberValue() != float64(len(body)) || md["bytes_out"].GetNumberValue() != float64(len(out)) {
		t.Fatalf("dynamic metadata = %v", md)
	}
	// Envoy's half-close is a normal end of the stream.
	if _, err := stream.Recv(); err == nil {
		t.Fatal("stream should end after CloseSend")
	}
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(s.metrics.Streams.WithLabelValues("ok")) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("EOF not counted as a normal end")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestProcessCancelIsNormal: Envoy resets the stream after half-closing.
func TestProcessCancelIsNormal(t *testing.T) {
	s := testServer(t, clampOnly)
	client := startGRPC(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := client.Process(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(reqHeaders("/v1/messages", modeBuffered, modeNone)); err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(s.metrics.Streams.WithLabelValues("ok")) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("cancel not treated as a normal end (errors=%v)", testutil.ToFloat64(s.metrics.Streams.WithLabelValues("error")))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Package testenv is the test environment for toolproc: an Envoy stand-in that speaks ext_proc to a
// processor the way Envoy's envoy.filters.http.ext_proc filter does, and a scripted fake LLM upstream.
//
// The stand-in (Proxy) follows the checklist in docs/envoy-notes.md §12: one Process
// stream per HTTP exchange, strict response checking, per-mode holding and chunking, content-length
// rules, header mutation rules, mode_override, ImmediateResponse, failure handling and timeouts. Comments
// cite the section of that document ("§4") that a behaviour comes from.
//
// Layout:
//   - config.go: ProxyConfig, RouteOverride, defaults and the checks Envoy does at config load;
//   - proxy.go: the HTTP side (routing, the upstream request, the client response);
//   - exchange.go: one HTTP exchange, its event loop and the processor stream;
//   - direction.go: the per-direction state machine (request = decoding, response = encoding);
//   - headers.go: header maps, proto conversion and the mutation rules of §7;
//   - content_length.go: the content-length rules of §4;
//   - local_reply.go: local replies, ImmediateResponse (§8) and failure handling (§9);
//   - chunker.go: how bodies are cut into the data chunks the filter sees;
//   - upstream.go, upstream_canned.go: FakeUpstream, a scripted OpenAI/Anthropic-shaped provider.
package testenv

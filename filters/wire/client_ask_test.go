package wire

import "testing"

func TestAskOf(t *testing.T) {
	cases := []struct {
		body string
		ep   Endpoint
		want ClientAsk
		ok   bool
	}{
		{`{"stream":true,"stream_options":{"include_usage":true}}`, Endpoint{}, ClientAsk{Stream: true, IncludeUsage: true}, true},
		{`{"stream":false}`, Endpoint{}, ClientAsk{}, true},
		{`{"contents":[]}`, Endpoint{Dialect: Gemini, Stream: true}, ClientAsk{Stream: true}, true},
		{`{"stream":`, Endpoint{}, ClientAsk{}, false},
	}
	for _, tc := range cases {
		got, ok := AskOf(tc.ep, []byte(tc.body))
		if got != tc.want || ok != tc.ok {
			t.Errorf("AskOf(%s) = %+v, %v", tc.body, got, ok)
		}
	}
}

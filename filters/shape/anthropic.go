package shape

import "github.com/toolproc/toolproc/filters/wire"

func textOnlyAnthropic(body []byte, o Options) ([]byte, Report, error) {
	return body, Report{}, ErrUnsupported
}

var _ = wire.Anthropic

package extproc

import (
	"fmt"

	"github.com/toolproc/toolproc/filters/pipeline"
	"github.com/toolproc/toolproc/filters/wire"
)

// RewriteBody runs exactly what the server runs for a request body sent to
// path under the named profile ("" means default). It is what
// `toolproc rewrite` uses. On any error the original body comes back with it.
func RewriteBody(cfg *Config, profile, path string, body []byte) ([]byte, pipeline.Report, error) {
	if profile == "" {
		profile = DefaultProfile
	}
	p, ok := cfg.Profiles[profile]
	if !ok {
		return body, pipeline.Report{}, fmt.Errorf("unknown profile %q (have %v)", profile, cfg.ProfileNames())
	}
	d := wire.DetectDialect(path)
	if d == wire.Unknown || !p.Handles(d) {
		return body, pipeline.Report{Dialect: d, BytesIn: len(body), BytesOut: len(body)}, nil
	}
	return BuildPipeline(p).Run(d, body)
}

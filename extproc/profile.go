package extproc

import (
	"context"

	"google.golang.org/grpc/metadata"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/pipeline"
)

// ProfileMetadataKey is the gRPC initial metadata key that names a profile.
// Envoy sets it per route with ExtProcPerRoute.overrides.grpc_initial_metadata.
const ProfileMetadataKey = "x-toolproc-profile"

// compiledProfile is a profile with its pipeline built once at start.
type compiledProfile struct {
	*Profile
	name     string
	pipeline *pipeline.Pipeline
}

// BuildPipeline assembles the request filters of a profile. This is the one
// place where the pipeline order is written down.
func BuildPipeline(p *Profile) *pipeline.Pipeline {
	var filters []pipeline.Filter
	if p.Clamp.Enabled {
		filters = append(filters, clamp.NewFilter(p.Clamp.ClampLimits()))
	}
	return pipeline.New(filters...)
}

func compileProfiles(cfg *Config) map[string]*compiledProfile {
	out := make(map[string]*compiledProfile, len(cfg.Profiles))
	for name, p := range cfg.Profiles {
		out[name] = &compiledProfile{Profile: p, name: name, pipeline: BuildPipeline(p)}
	}
	return out
}

// profileFor picks the profile named in the stream's initial metadata, else
// the default. An unknown name falls back to the default and is counted.
func (s *Server) profileFor(ctx context.Context) *compiledProfile {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(ProfileMetadataKey); len(v) > 0 && v[0] != "" {
		if p, ok := s.profiles[v[0]]; ok {
			return p
		}
		s.metrics.UnknownProfile.Inc()
		if _, seen := s.warnedProfiles.LoadOrStore(v[0], true); !seen {
			// Once per name: a misconfigured route would otherwise log on every request.
			s.log.Warn("unknown profile requested; using default (logged once per name)", "profile", v[0])
		}
	}
	return s.profiles[DefaultProfile]
}

package extproc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"google.golang.org/grpc/metadata"

	"github.com/toolproc/toolproc/filters/clamp"
	"github.com/toolproc/toolproc/filters/compress"
	"github.com/toolproc/toolproc/filters/history"
	"github.com/toolproc/toolproc/filters/shadow"
)

// ProfileMetadataKey is the gRPC initial metadata key that names a profile.
// Envoy sets it per route with ExtProcPerRoute.overrides.grpc_initial_metadata.
const ProfileMetadataKey = "x-toolproc-profile"

// compiledProfile is a profile with its strategies built once at start
// (the llm strategy's concurrency and rate limits are per profile).
type compiledProfile struct {
	*Profile
	name     string
	compress shadow.CompressOptions
	tiers    history.Options
	// clampMemo remembers the clamp's cut of each result by its bytes,
	// for this profile's limits (clamp.Memo).
	clampMemo *clamp.Memo
}

// clampMemoBytes bounds each profile's clamp memo, per generation: about
// eighty large results cut to the default 51,200 bytes (each held as its
// literal and its text), or tens of thousands left whole.
const clampMemoBytes = 8 << 20

func newCompiledProfile(name string, p *Profile, c compress.Completer) *compiledProfile {
	return &compiledProfile{Profile: p, name: name, compress: compressOptions(p, c), tiers: tiersOptions(p), clampMemo: clamp.NewMemo(clampMemoBytes)}
}

func compileProfiles(cfg *Config, llm func(*Profile) compress.Completer) map[string]*compiledProfile {
	out := make(map[string]*compiledProfile, len(cfg.Profiles))
	for name, p := range cfg.Profiles {
		var c compress.Completer
		if llm != nil {
			c = llm(p)
		}
		out[name] = newCompiledProfile(name, p, c)
	}
	return out
}

// shortHash names a setting in cache tags without repeating it.
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}

// profileFor picks the profile named in the stream's initial metadata, else
// the default. An unknown name falls back to the default and is counted.
func (s *Server) profileFor(ctx context.Context) *compiledProfile {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(ProfileMetadataKey); len(v) > 0 && v[0] != "" {
		if p, ok := s.currentProfiles()[v[0]]; ok {
			return p
		}
		s.metrics.UnknownProfile.Inc()
		if _, seen := s.warnedProfiles.LoadOrStore(v[0], true); !seen {
			// Once per name: a misconfigured route would otherwise log on every request.
			s.log.Warn("unknown profile requested; using default (logged once per name)", "profile", v[0])
		}
	}
	return s.currentProfiles()[DefaultProfile]
}

package extproc

// Config reload on SIGHUP and on a change of the file's modification time.
// Only profiles are swapped: they are what an operator tunes while traffic
// flows, and a profile is read once per exchange (newExchange), so swapping
// the whole set through one atomic pointer gives new exchanges the new
// profiles while exchanges in flight keep the ones they started with.
// Listeners, the store, the audit log, logging and tracing are built once at
// start; a reload that changes them says so and leaves them.

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"reflect"
	"sort"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// currentProfiles is the profile set new exchanges use.
func (s *Server) currentProfiles() map[string]*compiledProfile {
	if p := s.profiles.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *Server) setProfiles(ps map[string]*compiledProfile) {
	names := make([]string, 0, len(ps))
	for name := range ps {
		names = append(names, name)
	}
	s.metrics.initSeries(names)
	s.profiles.Store(&ps)
}

// ApplyProfiles makes next's profiles the ones new exchanges use. next must
// be validated (LoadConfig does). It returns the sections of next that differ
// from the running configuration and need a restart.
func (s *Server) ApplyProfiles(next *Config) (needRestart []string) {
	s.setProfiles(compileProfiles(next, s.llmCompleter))
	for _, sec := range []struct {
		name      string
		run, want any
	}{
		{"server", s.cfg.Server, next.Server},
		{"log", s.cfg.Log, next.Log},
		{"store", s.cfg.Store, next.Store},
		{"audit", s.cfg.Audit, next.Audit},
		{"tracing", s.cfg.Tracing, next.Tracing},
	} {
		if !reflect.DeepEqual(sec.run, sec.want) {
			needRestart = append(needRestart, sec.name)
		}
	}
	return needRestart
}

// ReloadOptions say where the config comes from and how often to look.
type ReloadOptions struct {
	Path string
	// Apply is run on every newly loaded config before it is compared and
	// applied: the command line's overrides (--grpc-addr, ...).
	Apply func(*Config)
	// Interval between modification-time checks; 0: SIGHUP only.
	Interval time.Duration
}

// reloadOutcomes are the values of toolproc_config_reloads_total's label.
var reloadOutcomes = []string{"ok", "error"}

// WatchConfig reloads o.Path on SIGHUP and when its modification time
// changes, until ctx is done. The signal handler is in place when it
// returns, so a SIGHUP sent after that never takes the process down.
func WatchConfig(ctx context.Context, s *Server, o ReloadOptions, reg prometheus.Registerer, log *slog.Logger) {
	reloads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolproc_config_reloads_total",
		Help: "Config reloads (SIGHUP or file change), by outcome: ok (profiles swapped), error (the running config was kept).",
	}, []string{"outcome"})
	for _, o := range reloadOutcomes {
		reloads.WithLabelValues(o)
	}
	if reg != nil {
		reg.MustRegister(reloads)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	last := modTime(o.Path)
	var pending time.Time
	reload := func(why string) {
		next, err := loadForReload(o.Path)
		if err == nil && o.Apply != nil {
			o.Apply(next)
			err = next.Validate()
		}
		if err != nil {
			reloads.WithLabelValues("error").Inc()
			log.Error("config reload failed; the running config is kept", "trigger", why, "path", o.Path, "error", err)
			return
		}
		restart := s.ApplyProfiles(next)
		reloads.WithLabelValues("ok").Inc()
		names := next.ProfileNames()
		sort.Strings(names)
		log.Info("config reloaded; new exchanges use its profiles", "trigger", why, "path", o.Path, "profiles", names)
		if len(restart) > 0 {
			log.Warn("config reload: these sections changed and take effect on restart only", "sections", restart)
		}
	}
	go func() {
		defer signal.Stop(hup)
		var tick <-chan time.Time
		if o.Interval > 0 {
			t := time.NewTicker(o.Interval)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				last = modTime(o.Path)
				reload("SIGHUP")
			case <-tick:
				// A change is acted on once the time has stayed put for one
				// interval: an editor that truncates and then writes is not
				// read half way (and an empty file is refused anyway).
				m := modTime(o.Path)
				switch {
				case m.Equal(last):
				case m.Equal(pending):
					last = m
					reload("file changed")
				default:
					pending = m
				}
			}
		}
	}()
}

// loadForReload is LoadConfig, except that an empty file is an error: at
// start it means "the defaults", but on a running server it is far more
// likely a file caught between truncate and write, and applying it would
// drop every profile the operator wrote.
func loadForReload(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New(path + ": empty file (not applied; to run on the defaults, restart)")
	}
	return LoadConfig(path)
}

// modTime is the file's modification time, zero when it cannot be read (a
// file being replaced: the next check sees the new one).
func modTime(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

package shadow

import (
	"context"
	"os"
	"testing"

	"github.com/redis/go-redis/v9"
)

// quietLogger drops go-redis's own log lines (one per failed dial), which
// the failure tests provoke on purpose.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quietLogger{})
	os.Exit(m.Run())
}

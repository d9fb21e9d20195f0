package lambdaapp

import (
	"context"
	"strings"
	"testing"

	"github.com/doclib/doclib/shared/settings"
)

func TestUsageKeysErrorNamesTheVariable(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	if _, err := NewUsageKeys(context.Background(), "gold=abc"); err == nil || !strings.Contains(err.Error(), settings.EnvUsagePlans) {
		t.Errorf("bad usage plans: %v", err)
	}
}

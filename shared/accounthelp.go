package doclib

import (
	"fmt"
	"strings"
)

// AccountHelp is the sentence that tells a client who changes what its key or
// workspace lacks (credit, subscription, a key): "{action}" in it stands for
// the step, e.g. "add AI credit to the workspace". Each deployment sets its own
// (settings.EnvAccountHelp): a product in front of doclib names its app, a
// team hosting doclib its administrator. The zero value is DefaultAccountHelp.
type AccountHelp string

// DefaultAccountHelp suits a self-hosted deployment.
const DefaultAccountHelp AccountHelp = "Ask the administrator of this doclib deployment to {action}."

// ActionPlaceholder marks where the step goes in an AccountHelp.
const ActionPlaceholder = "{action}"

// ParseAccountHelp checks an AccountHelp read from configuration; "" gives
// the default.
func ParseAccountHelp(s string) (AccountHelp, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return DefaultAccountHelp, nil
	}
	if strings.Count(s, ActionPlaceholder) != 1 {
		return "", fmt.Errorf("the account help sentence %q must hold %s once, where the step goes, e.g. %q", s, ActionPlaceholder, DefaultAccountHelp)
	}
	return AccountHelp(s), nil
}

// Ask returns the sentence for one step.
func (h AccountHelp) Ask(action string) string {
	if h == "" {
		h = DefaultAccountHelp
	}
	return strings.Replace(string(h), ActionPlaceholder, action, 1)
}

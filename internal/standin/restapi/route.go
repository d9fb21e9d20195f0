package restapi

import (
	"strings"
)

// route is a resource's path split into parts.
type route struct {
	res   Resource
	parts []string
}

func newRoute(res Resource) route {
	return route{res: res, parts: split(res.Path)}
}

func split(path string) []string {
	path = strings.Trim(path, "/")
	if path == "" {
		return nil
	}
	return strings.Split(path, "/")
}

// match finds the resource of a path as API Gateway does: a literal part
// wins over a {param}, which wins over a greedy {param+}; then the method,
// or ANY.
func (g *Gateway) match(method, path string) (*route, map[string]string, Method, string, bool) {
	parts := split(path)
	var best *route
	var bestParams map[string]string
	bestScore := -1
	for i := range g.routes {
		rt := &g.routes[i]
		params, score, ok := rt.matches(parts)
		if ok && score > bestScore {
			best, bestParams, bestScore = rt, params, score
		}
	}
	if best == nil {
		return nil, nil, Method{}, "", false
	}
	for _, declared := range []string{method, "ANY"} {
		if m, ok := best.res.Methods[declared]; ok {
			return best, bestParams, m, declared, true
		}
	}
	return nil, nil, Method{}, "", false
}

// matches reports whether parts fit the route, with its path parameters
// and a score that ranks literal matches above parameters.
func (rt *route) matches(parts []string) (map[string]string, int, bool) {
	params := map[string]string{}
	score := 0
	for i, p := range rt.parts {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "+}") {
			if i >= len(parts) {
				return nil, 0, false
			}
			params[p[1:len(p)-2]] = strings.Join(parts[i:], "/")
			return params, score, true
		}
		if i >= len(parts) {
			return nil, 0, false
		}
		switch {
		case strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}"):
			if parts[i] == "" {
				return nil, 0, false
			}
			params[p[1:len(p)-1]] = parts[i]
			score++
		case p == parts[i]:
			score += 2
		default:
			return nil, 0, false
		}
	}
	if len(parts) != len(rt.parts) {
		return nil, 0, false
	}
	return params, score, true
}

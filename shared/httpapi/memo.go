package httpapi

import (
	"container/list"
	"context"
	"net/http"
	"strconv"
	"sync"
)

// DefaultMemoBytes is the answers kept for a snapshot store when
// Config.MemoBytes is 0.
const DefaultMemoBytes = 64 << 20

// memo keeps the answers made over a store whose data is a snapshot
// (doclib.Versioned: the memory store of doclib-server), so that a repeated
// read is a copy of bytes rather than a walk, an encoding and a hash
// (issue 24: a graph at its caps took twice as long to make as to send).
// An answer is kept by the snapshot's version, the key (its workspace and
// ID: the key's scope is part of the snapshot) and the request's path and
// query: exact by construction, and never shared between keys. Only 200s
// are kept, and never a search's, which spends credit and is billed by the
// request. The limits, the 304 and compression apply to a kept answer as
// to a new one. Least recently used answers go first past the byte budget;
// an answer of more than a quarter of it is not kept.
type memo struct {
	budget int

	mu      sync.Mutex
	version uint64
	size    int
	byKey   map[string]*list.Element
	lru     list.List // of *memoEntry, most recent first
}

type memoEntry struct {
	key  string
	body []byte
	tag  string
}

func newMemo(budget int) *memo {
	if budget == 0 {
		budget = DefaultMemoBytes
	}
	if budget < 0 {
		return nil
	}
	return &memo{budget: budget, byKey: map[string]*list.Element{}}
}

// get returns the answer kept for key at version.
func (m *memo) get(version uint64, key string) (*memoEntry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if version != m.version {
		return nil, false
	}
	el, ok := m.byKey[key]
	if !ok {
		return nil, false
	}
	m.lru.MoveToFront(el)
	return el.Value.(*memoEntry), true
}

// put keeps a copy of body. A newer version drops everything kept for the
// older one; an answer of an older version is not kept.
func (m *memo) put(version uint64, key string, body []byte, tag string) {
	if len(body) > m.budget/4 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case version < m.version:
		return
	case version > m.version:
		m.version, m.size = version, 0
		clear(m.byKey)
		m.lru.Init()
	}
	if _, ok := m.byKey[key]; ok {
		return
	}
	for m.size+len(body) > m.budget {
		last := m.lru.Back()
		e := m.lru.Remove(last).(*memoEntry)
		delete(m.byKey, e.key)
		m.size -= len(e.body)
	}
	e := &memoEntry{key: key, body: append([]byte(nil), body...), tag: tag}
	m.byKey[key] = m.lru.PushFront(e)
	m.size += len(body)
}

// memoSlot is where a request's answer is to be kept, once made.
type memoSlot struct {
	version uint64
	key     string
}

// memoized answers from the memo when it holds the request's answer, and
// otherwise has h make it and keep it (writeAnswer). Without a snapshot
// store, or without a memo, it is h.
func (s *server) memoized(h http.Handler) http.Handler {
	if s.memo == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		version, ok := s.Service.Version()
		p := PrincipalFrom(r.Context())
		if !ok || p == nil {
			h.ServeHTTP(w, r)
			return
		}
		key := strconv.Itoa(len(p.WorkspaceID)) + ":" + p.WorkspaceID + p.KeyID + "\x00" + r.URL.Path + "?" + r.URL.RawQuery
		if e, ok := s.memo.get(version, key); ok {
			s.sendAnswer(w, r, e.body, e.tag)
			return
		}
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), memoKey, &memoSlot{version, key})))
	})
}

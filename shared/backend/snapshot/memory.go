package snapshot

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"sync"
)

// Memory is Blobs in memory, for tests: a versioned bucket whose ETags are
// quoted MD5 digests of the content, as S3's are for single-part uploads.
// Every Put adds a version; old versions stay readable by their ID.
type Memory struct {
	// FailPut, when set, is asked before every Put; an error it returns
	// fails the Put, which then changes nothing.
	FailPut func(key string) error
	// FailGet is the same for Get. Set both before m is in use, or with
	// SetFailPut and SetFailGet.
	FailGet func(key string, opt GetOptions) error

	mu    sync.Mutex
	keys  map[string][]memVersion // oldest first; the last is current
	count int
}

type memVersion struct {
	id, etag string
	data     []byte
}

// NewMemory returns an empty bucket.
func NewMemory() *Memory { return &Memory{keys: map[string][]memVersion{}} }

var _ Blobs = (*Memory)(nil)

// Get implements Blobs.
func (m *Memory) Get(ctx context.Context, key string, opt GetOptions) (io.ReadCloser, Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, Object{}, err
	}
	m.mu.Lock()
	fail := m.FailGet
	m.mu.Unlock()
	if fail != nil {
		if err := fail(key, opt); err != nil {
			return nil, Object{}, err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.keys[key]
	if len(vs) == 0 {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	v := vs[len(vs)-1]
	if opt.Version != "" {
		found := false
		for _, w := range vs {
			if w.id == opt.Version {
				v, found = w, true
			}
		}
		if !found {
			return nil, Object{}, fmt.Errorf("get %s version %s: %w", key, opt.Version, ErrNotFound)
		}
	}
	if opt.IfNoneMatch != "" && opt.IfNoneMatch == vs[len(vs)-1].etag {
		return nil, Object{}, ErrNotModified
	}
	return io.NopCloser(bytes.NewReader(v.data)), Object{ETag: v.etag, Version: v.id, Size: int64(len(v.data))}, nil
}

// Put implements Blobs.
func (m *Memory) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, cond Condition) (Object, error) {
	if err := ctx.Err(); err != nil {
		return Object{}, err
	}
	m.mu.Lock()
	fail := m.FailPut
	m.mu.Unlock()
	if fail != nil {
		if err := fail(key); err != nil {
			return Object{}, err
		}
	}
	data, err := io.ReadAll(body)
	if err != nil {
		return Object{}, err
	}
	if int64(len(data)) != size {
		return Object{}, fmt.Errorf("put %s: a body of %d bytes, said %d", key, len(data), size)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.keys[key]
	if cond.IfNoneMatch && len(vs) > 0 {
		return Object{}, fmt.Errorf("put %s if none: %w", key, ErrConflict)
	}
	if cond.IfMatch != "" && (len(vs) == 0 || vs[len(vs)-1].etag != cond.IfMatch) {
		return Object{}, fmt.Errorf("put %s if %s: %w", key, cond.IfMatch, ErrConflict)
	}
	sum := md5.Sum(data)
	m.count++
	v := memVersion{id: fmt.Sprintf("v%06d", m.count), etag: `"` + hex.EncodeToString(sum[:]) + `"`, data: data}
	m.keys[key] = append(vs, v)
	return Object{ETag: v.etag, Version: v.id, Size: size}, nil
}

// Versions returns the number of versions key has.
func (m *Memory) Versions(key string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.keys[key])
}

// SetFailPut sets FailPut safely while other goroutines use m.
func (m *Memory) SetFailPut(f func(key string) error) {
	m.mu.Lock()
	m.FailPut = f
	m.mu.Unlock()
}

// SetFailGet sets FailGet safely while other goroutines use m.
func (m *Memory) SetFailGet(f func(key string, opt GetOptions) error) {
	m.mu.Lock()
	m.FailGet = f
	m.mu.Unlock()
}

package snapshot

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
)

// Memory is Blobs in memory, for tests: a versioned bucket whose ETags are
// quoted MD5 digests of the content, as S3's are for single-part uploads
// (and the digest of the parts' digests, "-" and their number, for a
// multipart one). Every Put adds a version; old versions stay readable by
// their ID. PutStream runs a multipart upload as S3 does, refusing parts
// but the last under MinPartSize, and counts the uploads begun and left
// open (Uploads).
type Memory struct {
	// FailPut, when set, is asked before every Put and PutStream; an error
	// it returns fails the call, which then changes nothing.
	FailPut func(key string) error
	// FailGet is the same for Get. Set both before m is in use, or with
	// SetFailPut and SetFailGet.
	FailGet func(key string, opt GetOptions) error
	// FailPart, when set, is asked before part n of a multipart upload of
	// key is stored; an error it returns fails the part.
	FailPart func(key string, n int) error

	mu      sync.Mutex
	keys    map[string][]memVersion // oldest first; the last is current
	count   int
	uploads map[int]*memUpload // multipart uploads in progress
	begun   int                // multipart uploads created
}

// memUpload is a multipart upload in progress.
type memUpload struct {
	key   string
	parts map[int][]byte
}

type memVersion struct {
	id, etag string
	data     []byte
	marker   bool // a delete marker
}

// NewMemory returns an empty bucket.
func NewMemory() *Memory {
	return &Memory{keys: map[string][]memVersion{}, uploads: map[int]*memUpload{}}
}

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
	if len(vs) == 0 || opt.Version == "" && vs[len(vs)-1].marker {
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
	obj := Object{ETag: v.etag, Version: v.id, Size: int64(len(v.data))}
	data, err := inRange(v.data, opt)
	if err != nil {
		return nil, Object{}, fmt.Errorf("get %s: %w", key, err)
	}
	return io.NopCloser(bytes.NewReader(data)), obj, nil
}

// inRange is the part of data that opt's range asks for (all of it without
// one).
func inRange(data []byte, opt GetOptions) ([]byte, error) {
	if opt.Length <= 0 {
		return data, nil
	}
	if opt.Offset < 0 || opt.Offset >= int64(len(data)) {
		return nil, fmt.Errorf("bytes %d to %d of %d: %w", opt.Offset, opt.Offset+opt.Length-1, len(data), ErrRange)
	}
	return data[opt.Offset:min(int64(len(data)), opt.Offset+opt.Length)], nil
}

// Put implements Blobs.
func (m *Memory) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, cond Condition) (Object, error) {
	if err := m.checkPut(ctx, key); err != nil {
		return Object{}, err
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
	if cond.IfNoneMatch && len(vs) > 0 && !vs[len(vs)-1].marker {
		return Object{}, fmt.Errorf("put %s if none: %w", key, ErrConflict)
	}
	if cond.IfMatch != "" && (len(vs) == 0 || vs[len(vs)-1].etag != cond.IfMatch) {
		return Object{}, fmt.Errorf("put %s if %s: %w", key, cond.IfMatch, ErrConflict)
	}
	sum := md5.Sum(data)
	return m.add(key, data, `"`+hex.EncodeToString(sum[:])+`"`), nil
}

// checkPut is what fails a Put or PutStream before it changes anything:
// the context, then FailPut.
func (m *Memory) checkPut(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	fail := m.FailPut
	m.mu.Unlock()
	if fail != nil {
		return fail(key)
	}
	return nil
}

// add makes data key's new current version. Called with m.mu held.
func (m *Memory) add(key string, data []byte, etag string) Object {
	m.count++
	v := memVersion{id: fmt.Sprintf("v%06d", m.count), etag: etag, data: data}
	m.keys[key] = append(m.keys[key], v)
	return Object{ETag: v.etag, Version: v.id, Size: int64(len(data))}
}

// PutStream implements Blobs with UploadParts over a multipart upload in
// memory.
func (m *Memory) PutStream(ctx context.Context, key string, write func(io.Writer) error) (Object, error) {
	if err := m.checkPut(ctx, key); err != nil {
		return Object{}, err
	}
	return UploadParts(ctx, &memMultipart{m: m, key: key}, PartSize, write)
}

// Uploads counts the multipart uploads created so far and those of them
// neither completed nor aborted.
func (m *Memory) Uploads() (begun, open int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.begun, len(m.uploads)
}

// memMultipart is one multipart upload of a Memory.
type memMultipart struct {
	m   *Memory
	key string
	id  int
}

func (u *memMultipart) PutWhole(ctx context.Context, data []byte) (Object, error) {
	m := u.m
	m.mu.Lock()
	defer m.mu.Unlock()
	sum := md5.Sum(data)
	return m.add(u.key, bytes.Clone(data), `"`+hex.EncodeToString(sum[:])+`"`), nil
}

func (u *memMultipart) Create(ctx context.Context) error {
	m := u.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.begun++
	u.id = m.begun
	m.uploads[u.id] = &memUpload{key: u.key, parts: map[int][]byte{}}
	return nil
}

func (u *memMultipart) UploadPart(ctx context.Context, n int, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m := u.m
	m.mu.Lock()
	fail := m.FailPart
	m.mu.Unlock()
	if fail != nil {
		if err := fail(u.key, n); err != nil {
			return err
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	up := m.uploads[u.id]
	if up == nil {
		return fmt.Errorf("upload part %d of %s: NoSuchUpload", n, u.key)
	}
	up.parts[n] = bytes.Clone(data)
	return nil
}

// Complete assembles parts 1 to n as S3 does: every part but the last
// must be at least MinPartSize (S3 answers EntityTooSmall).
func (u *memMultipart) Complete(ctx context.Context) (Object, error) {
	m := u.m
	m.mu.Lock()
	defer m.mu.Unlock()
	up := m.uploads[u.id]
	if up == nil || len(up.parts) == 0 {
		return Object{}, fmt.Errorf("complete %s: no such upload, or no part", u.key)
	}
	var data []byte
	sums := md5.New()
	for n := 1; n <= len(up.parts); n++ {
		p, ok := up.parts[n]
		if !ok {
			return Object{}, fmt.Errorf("complete %s: InvalidPart: no part %d", u.key, n)
		}
		if n < len(up.parts) && len(p) < MinPartSize {
			return Object{}, fmt.Errorf("complete %s: EntityTooSmall: part %d is %d bytes, under %d", u.key, n, len(p), MinPartSize)
		}
		sum := md5.Sum(p)
		sums.Write(sum[:])
		data = append(data, p...)
	}
	delete(m.uploads, u.id)
	return m.add(u.key, data, fmt.Sprintf(`"%s-%d"`, hex.EncodeToString(sums.Sum(nil)), len(up.parts))), nil
}

func (u *memMultipart) Abort(ctx context.Context) error {
	m := u.m
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.uploads, u.id)
	return nil
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

// Keys returns the keys that start with prefix and have a version, sorted.
func (m *Memory) Keys(prefix string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, vs := range m.keys {
		if len(vs) > 0 && !vs[len(vs)-1].marker && strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Delete implements Blobs: as in a versioned bucket, it adds a delete marker
// (the versions stay readable by ID); a key without a current version is
// deleted all the same.
func (m *Memory) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.count++
	m.keys[key] = append(m.keys[key], memVersion{id: fmt.Sprintf("v%06d", m.count), marker: true})
	return nil
}

// Package staleread models DynamoDB's eventually consistent reads in front
// of an engine that has none. dynalite answers every read with the latest
// write; DynamoDB does not: "When issuing eventually consistent reads to a
// DynamoDB table or an index, the responses may not reflect the results of a
// recently completed write operation" ("DynamoDB read consistency", Amazon
// DynamoDB Developer Guide,
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadConsistency.html).
// Code that reads back what it just wrote without ConsistentRead passes
// against dynalite and fails on AWS now and then.
//
// A Proxy sits between DynamoDB clients and the engine and makes the
// failure certain: an eventually consistent read never sees a write made
// less than Window (1 s by default) before it. For every write it forwards
// (PutItem, UpdateItem, DeleteItem, BatchWriteItem) it first reads each item's image with a strongly consistent read, then
// records the key, the image and, once the engine acknowledged the write,
// the time. An eventually consistent GetItem or BatchGetItem of such a key
// answers the image from before the write (or no item); an eventually
// consistent Query or Scan replaces such items by their earlier image, or
// leaves them out when they did not exist. Reads with ConsistentRead true
// pass through unchanged, and so does every other call. A read of a global
// secondary index, which is always eventually consistent, is answered
// stale.
//
// What it does not model: an item deleted within the window is missing
// from a Query or Scan (AWS might still return it: the proxy only sees the
// items the engine returns); a FilterExpression and a key condition on an
// index's sort key are not evaluated again on the earlier image, and the
// order of an index query is the new images'; Select COUNT and PartiQL pass
// through unchanged, and so do transactions, which dynalite does not
// implement (it answers UnknownOperationException; doclib uses none).
//
// The proxy forwards each request's headers as they came, signature
// included; it changes a body only to add the key attributes to an eventual
// Query, Scan or BatchGetItem's projection (so that it can tell the items
// apart), which dynalite, checking only that a call is signed, accepts. It
// reads the images with requests signed by credentials of its own.
package staleread

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure a Proxy.
type Options struct {
	// Window is how long a write stays unseen by eventually consistent
	// reads (1 s when 0).
	Window time.Duration
	// Now is the clock (time.Now when nil): tests move it instead of
	// sleeping.
	Now func() time.Time
	// Region signs the proxy's own reads (us-east-1 when empty).
	Region string
	// Logf receives what the proxy could not do (nil discards it).
	Logf func(string, ...any)
}

// DefaultWindow is the window of Options.Window 0.
const DefaultWindow = time.Second

// maxBody bounds the request bodies the proxy reads: BatchWriteItem's 16 MB
// ("BatchWriteItem", Amazon DynamoDB API Reference) and some room.
const maxBody = 32 << 20

// Proxy is the model; build it with New. It is an http.Handler.
type Proxy struct {
	target *url.URL
	opts   Options
	pass   *httputil.ReverseProxy
	client *http.Client

	// locks serialize the writes of one item: the image read before a
	// write must be the item as that write finds it.
	locks [256]sync.Mutex

	mu        sync.Mutex
	writes    map[string]map[string][]*write // by table, then item key
	schemas   map[string]*schema             // by table; only tables that exist
	lastSweep time.Time

	staleItems atomic.Int64
}

// write is one recorded write of an item.
type write struct {
	before map[string]json.RawMessage // nil: there was no item
	done   bool                       // the engine acknowledged it
	at     time.Time                  // when, once done
}

// New returns a proxy to the DynamoDB endpoint target (http://host:port).
func New(target string, opts Options) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("staleread: target %q: want http://host:port", target)
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Region == "" {
		opts.Region = "us-east-1"
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	p := &Proxy{target: u, opts: opts, writes: map[string]map[string][]*write{}, schemas: map[string]*schema{},
		client: &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 64}}}
	p.pass = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host // as signed
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.opts.Logf("staleread: forwarding to %s: %v", u, err)
			writeError(w, "InternalServerError", "the engine behind the proxy is unreachable")
		},
	}
	return p, nil
}

// Window is how long a write stays unseen by eventually consistent reads.
func (p *Proxy) Window() time.Duration { return p.opts.Window }

// StaleItems counts the items the proxy answered with an earlier image or
// left out, over all reads so far.
func (p *Proxy) StaleItems() int64 { return p.staleItems.Load() }

const targetPrefix = "DynamoDB_20120810."

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), targetPrefix)
	if !ok || r.Method != http.MethodPost {
		p.pass.ServeHTTP(w, r)
		return
	}
	var handle func(http.ResponseWriter, *http.Request, string, []byte)
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem":
		handle = p.write
	case "GetItem":
		handle = p.getItem
	case "BatchGetItem":
		handle = p.batchGetItem
	case "Query", "Scan":
		handle = p.query
	case "CreateTable", "UpdateTable", "DeleteTable":
		handle = p.tableChange
	default:
		p.pass.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		writeError(w, "InternalServerError", "reading the request: "+err.Error())
		return
	}
	if len(body) > maxBody {
		writeError(w, "ValidationException", "the request is larger than the proxy reads")
		return
	}
	handle(w, r, op, body)
}

// response is the engine's answer, read whole.
type response struct {
	status int
	header http.Header
	body   []byte
}

// send forwards r with body to the engine, its headers as they came.
func (p *Proxy) send(r *http.Request, body []byte) (*response, error) {
	out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, p.target.JoinPath(r.URL.Path).String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		out.Header[k] = vs
	}
	out.Header.Del("Content-Length")
	// A body the proxy rewrites must be plain.
	out.Header.Set("Accept-Encoding", "identity")
	out.Host = r.Host
	resp, err := p.client.Do(out)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}

// reply writes the engine's answer, with body in place of its own when
// body is not nil: then Content-Length and X-Amz-Crc32, the CRC32 of the
// body the AWS SDKs check, are made anew.
func reply(w http.ResponseWriter, resp *response, body []byte) {
	for k, vs := range resp.header {
		w.Header()[k] = vs
	}
	if body != nil {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	} else {
		body = resp.body
	}
	w.WriteHeader(resp.status)
	_, _ = w.Write(body)
}

// writeError answers in DynamoDB's JSON error shape.
func writeError(w http.ResponseWriter, code, msg string) {
	status := http.StatusInternalServerError
	if code != "InternalServerError" {
		status = http.StatusBadRequest
	}
	b, _ := json.Marshal(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#" + code, "message": msg})
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// forward sends r on and replies with the engine's answer unchanged.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	resp, err := p.send(r, body)
	if err != nil {
		p.opts.Logf("staleread: forwarding to %s: %v", p.target, err)
		writeError(w, "InternalServerError", "the engine behind the proxy is unreachable")
		return
	}
	reply(w, resp, nil)
}

// tableChange forwards CreateTable, UpdateTable and DeleteTable and forgets
// what it knew of the table: its key schema, and for a deleted table its
// writes.
func (p *Proxy) tableChange(w http.ResponseWriter, r *http.Request, op string, body []byte) {
	var in struct{ TableName string }
	_ = json.Unmarshal(body, &in)
	resp, err := p.send(r, body)
	if err != nil {
		p.opts.Logf("staleread: %s: %v", op, err)
		writeError(w, "InternalServerError", "the engine behind the proxy is unreachable")
		return
	}
	p.mu.Lock()
	delete(p.schemas, in.TableName)
	if op == "DeleteTable" && resp.status == http.StatusOK {
		delete(p.writes, in.TableName)
	}
	p.mu.Unlock()
	reply(w, resp, nil)
}

// Server is a Proxy listening on a loopback port.
type Server struct {
	*Proxy
	// URL is the proxy's endpoint, http://127.0.0.1:N.
	URL string
	srv *http.Server
}

// Start listens on 127.0.0.1 and serves a proxy to target.
func Start(target string, opts Options) (*Server, error) {
	p, err := New(target, opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("staleread: listen: %w", err)
	}
	s := &Server{Proxy: p, URL: "http://" + ln.Addr().String(), srv: &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error {
	err := s.srv.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	s.client.CloseIdleConnections()
	return err
}

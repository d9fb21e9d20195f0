// Command fixedserver is the yardstick of scripts/load's paired runs: it
// asks a running doclib-server once for each path it is given, then serves
// exactly those answers (status, headers and bytes) from memory, with the
// same net/http server, so that wrk measures what doclib-server's own work
// costs on top of sending its bytes (issue 24: graph and traverse were 0.43
// and 0.15 of this).
//
//	fixedserver --from http://127.0.0.1:8080 --key dlk_demo_full_scope --addr 127.0.0.1:8081 /libraries /libraries/lib_it/graph
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "fixedserver:", err)
		os.Exit(1)
	}
}

// answer is one recorded exchange.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("fixedserver", flag.ContinueOnError)
	from := fs.String("from", "", "the doclib-server to record, http://host:port")
	key := fs.String("key", "", "the API key to ask with")
	addr := fs.String("addr", "127.0.0.1:0", "where to serve the recorded answers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *from == "" || fs.NArg() == 0 {
		return fmt.Errorf("usage: fixedserver --from URL --key KEY [--addr HOST:PORT] and one or more paths")
	}
	answers := map[string]answer{}
	for _, p := range fs.Args() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, *from+p, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+*key)
		req.Header.Set("Accept-Encoding", "identity") // as wrk asks
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Header.Del("Date")
		answers[p] = answer{resp.StatusCode, resp.Header, body}
		fmt.Printf("recorded %s: %d, %d bytes\n", p, resp.StatusCode, len(body))
	}
	srv := &http.Server{Addr: *addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for k, v := range a.header {
			w.Header()[k] = v
		}
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body)
	})}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Printf("serving on %s\n", *addr)
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		return err
	}
	return nil
}

// Command raw speaks the Runtime API with net/http alone, to see what the
// emulator answers to requests aws-lambda-go never makes. It answers its
// first event with what it saw while handling it, and its second with what
// it saw after.
package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
)

var base = "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/"

func status(method, path, body string) int {
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return -1
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func next() (string, http.Header, []byte) {
	resp, err := http.Get(base + "invocation/next")
	if err != nil {
		os.Exit(2)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.Header.Get("Lambda-Runtime-Aws-Request-Id"), resp.Header, b
}

func main() {
	id1, headers, payload := next()
	seen := map[string]any{
		"headers": headers,
		"payload": string(payload),
		"codes": map[string]int{
			"initErrorAfterNext":  status("POST", "init/error", `{"errorMessage":"late","errorType":"Late"}`),
			"wrongID":             status("POST", "invocation/not-"+id1+"/response", `{}`),
			"nextWhileUnanswered": status("GET", "invocation/next", ""),
		},
	}
	b, _ := json.Marshal(seen)
	first := status("POST", "invocation/"+id1+"/response", string(b))

	id2, _, _ := next()
	b, _ = json.Marshal(map[string]int{
		"firstResponse":  first,
		"answerTwice":    status("POST", "invocation/"+id1+"/response", `{}`),
		"errorForOldID":  status("POST", "invocation/"+id1+"/error", `{}`),
		"secondEventSet": len(id2),
	})
	status("POST", "invocation/"+id2+"/response", string(b))
	for {
		next()
	}
}

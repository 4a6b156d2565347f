package capture

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// BenchmarkLoopbackHTTP measures one keep-alive request through the
// replay server, with every protocol event handed to (and acknowledged
// by) a stand-in for the recording loop; the baseline is a bare net/http
// server answering the same body. Compare ns/op of the two sub-benchmarks.
func BenchmarkLoopbackHTTP(b *testing.B) {
	body := "hello from replay"
	b.Run("baseline", func(b *testing.B) {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			io.WriteString(w, body)
		})}
		go srv.Serve(ln)
		defer srv.Close()
		benchGet(b, "http://"+ln.Addr().String()+"/a")
	})
	b.Run("loopback", func(b *testing.B) {
		sc := parseOK(b, mustJSON(b, obj{"approved": true, "executable": "/bin/sh", "working_directory": "/tmp",
			"limits": obj{"protocol_events": 100000},
			"replay": obj{"http": []any{obj{"method": "GET", "path": "/a", "max_calls": MaxReplayCalls, "response": obj{"body": body}}}}}))
		l, err := newLoopback(sc)
		if err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() { // the recording loop's part: take and acknowledge
			for {
				select {
				case o := <-l.obs:
					close(o.ack)
				case <-done:
					return
				}
			}
		}()
		l.serve(time.Now())
		defer func() { l.stop(); close(done) }()
		benchGet(b, "http://127.0.0.1:"+strconv.Itoa(l.port)+"/a")
	})
}

func benchGet(b *testing.B, url string) {
	b.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}
